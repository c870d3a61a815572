// InputError: a rejection of user input with its file, field and reason.
// The message reads "file: field: reason" so users can jump to the spot.
#include "tbcheck/model/error.hpp"

namespace tbcheck::model {

std::string input_error_message(const std::string& where, const std::string& field, const std::string& reason) {
  std::string m = where;
  if (!field.empty()) m += (m.empty() ? "" : ": ") + field;
  m += (m.empty() ? "" : ": ") + reason;
  return m;
}

InputError::InputError(std::string where, std::string field, std::string reason)
    : std::runtime_error(input_error_message(where, field, reason)),
      where_(std::move(where)),
      field_(std::move(field)),
      reason_(std::move(reason)) {}

}  // namespace tbcheck::model
