//===- result.h - errors as values -------------------------------------===//
// Result<T> carries a value or an Error (errno + a message that says what
// failed, on what input, and what to do). No exceptions cross stage borders.
#pragma once
#include <string>
#include <utility>
#include <variant>

namespace syspgo {

struct Error {
  int code = 0;         // errno where one applies, else 0
  std::string message;  // complete sentence(s) for a person
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error e) : v_(std::move(e)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& value() const& { return std::get<0>(v_); }
  T* operator->() { return &std::get<0>(v_); }
  T& operator*() { return std::get<0>(v_); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error e) : err_(std::move(e)), ok_(false) {}
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return err_; }

 private:
  Error err_;
  bool ok_ = true;
};

using Status = Result<void>;

inline Error MakeError(std::string msg, int code = 0) { return Error{code, std::move(msg)}; }

}  // namespace syspgo

// Propagates an error from an expression returning Result/Status.
#define SYSPGO_TRY(expr)                       \
  do {                                         \
    auto _syspgo_r = (expr);                   \
    if (!_syspgo_r.ok()) return _syspgo_r.error(); \
  } while (0)
