// The one case a command reads from a file (predict, run, minimize, export-examiner and the Python module's
// scenario arguments): one loader, so the CLI and the bindings refuse the same inputs with the same words.
#pragma once
#include <string>

#include "tbcheck/model/observation.hpp"

namespace tbcheck::model {

// The case in `path` (a file, never a folder): its only case, or the one whose id is `case_id` when that
// is not empty. Anything else is an InputError naming the file, --case, and `command` ("predict takes one
// scenario or case; this holds 3").
Case load_one_case(const std::string& path, const std::string& case_id, const std::string& command);

}  // namespace tbcheck::model
