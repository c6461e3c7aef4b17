// A fixture for the stage check: fitting that plans (an allowed edge: fit depends on plan).
#include "memledger/ir/graph.h"
#include "memledger/plan/memory_plan.h"
