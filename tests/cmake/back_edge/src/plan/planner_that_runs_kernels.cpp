// A fixture for the stage check: planning that reaches into the executor (a back-edge).
#include "memledger/exec/interpreter.h"
#include "memledger/ir/graph.h"
