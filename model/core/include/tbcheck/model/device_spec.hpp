// The device a command works on, as the user names it: a built-in device's name or a device JSON file
// (a GPU measured by `probe-gpc`, a user's own card), and whether a device is exactly a built-in one.
#pragma once
#include <optional>
#include <string>

#include "tbcheck/model/device.hpp"

namespace tbcheck::model {

// `spec` is read as a file when it exists, contains '/' or ends in ".json"; otherwise it must name a
// built-in device. Errors name `flag` (and the file and field for a file).
Device device_from_spec(const std::string& spec, const std::string& flag);

// The device a JSON file holds, or nullopt when the file is not a valid device file: for a search over the files
// of a folder (docs/results/<gpu>/ holds learn results and probe logs beside its device files), where "not a
// device" is an answer, not an error.
std::optional<Device> device_file_if_valid(const std::string& path);

// True when a built-in device of this name exists and equals `d` field for field: only then may a case
// name its device instead of writing it out (a measured H200 keeps the name "h200" but not its numbers).
bool is_builtin(const Device& d);

}  // namespace tbcheck::model
