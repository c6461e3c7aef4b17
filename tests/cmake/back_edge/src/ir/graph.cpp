// A fixture for the stage check: an allowed include.
#include "memledger/ir/graph.h"
