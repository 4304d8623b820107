// A stage above model: not on its include path, so this must not compile.
#include <glmrt/engine/engine.h>
