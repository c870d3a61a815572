// Input errors: every rejection of user input names where (file), what (field path) and why.
// The CLI maps InputError to exit code 2; anything else escaping is a bug.
#pragma once
#include <stdexcept>
#include <string>

namespace tbcheck::model {

// "where: field: reason", empty parts left out: InputError's message, and the same text where a refusal is
// reported as a value instead of thrown (FeasibilityCheck::message).
std::string input_error_message(const std::string& where, const std::string& field, const std::string& reason);

class InputError : public std::runtime_error {
 public:
  InputError(std::string where, std::string field, std::string reason);
  const std::string& where() const { return where_; }
  const std::string& field() const { return field_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string where_, field_, reason_;
};

}  // namespace tbcheck::model
