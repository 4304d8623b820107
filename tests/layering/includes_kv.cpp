// A stage below model: found on its include path.
#include <glmrt/kv/kv_cache.h>
