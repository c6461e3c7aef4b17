// A fixture for the stage check: planning that reaches into fitting (a back-edge: fit is
// above plan, and plan builds without it).
#include "memledger/fit/schedule.h"
#include "memledger/plan/memory_plan.h"
