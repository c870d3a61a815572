// File output that never leaves a half-written file: write to a temporary beside the target,
// then rename over it. Every file tbcheck writes goes through here.
#pragma once
#include <string>

namespace tbcheck::model {

// Writes `content` to `path` atomically; an InputError names the path and the reason on failure.
// With `no_overwrite`, an existing file is an error (recorded hardware results are never replaced).
void write_file_atomic(const std::string& path, const std::string& content, bool no_overwrite = false);

// A string usable as a file name and case id: letters, digits, '.', '_' and '-' kept, the rest '-'
// ("sim:alg1" -> "sim-alg1").
std::string file_safe(const std::string& s);

}  // namespace tbcheck::model
