// Reading a file a command was given: the kind and size are checked before a byte is read,
// so a directory, FIFO, device (/dev/zero) or a file larger than the caller's bound is an
// Error naming the path, never an endless or gigabyte-sized read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace memledger {

// The whole content of the regular file `path`, at most `max_bytes` long. `what` says what
// the file is for in messages ("device profile", "--input x").
std::string read_input_file(const std::string& path, int64_t max_bytes, std::string_view what = "");

// The same checks without reading: Error unless `path` is a regular file of at most
// `max_bytes` bytes; returns its size.
int64_t check_input_file(const std::string& path, int64_t max_bytes, std::string_view what = "");

}  // namespace memledger
