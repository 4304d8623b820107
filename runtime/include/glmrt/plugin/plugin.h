// Umbrella header of the glmrt plugin SDK.
#pragma once

#include <glmrt/plugin/abi.h>
#include <glmrt/plugin/draft.h>
#include <glmrt/plugin/host_services.h>
#include <glmrt/plugin/io.h>
#include <glmrt/plugin/kernels.h>
#include <glmrt/plugin/weight_format.h>
