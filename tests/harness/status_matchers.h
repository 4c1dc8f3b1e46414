// gtest helpers for absl::Status / StatusOr.
// Thread safety: macros only. Lifetime: nothing outlives the expression.
#pragma once

#include <gtest/gtest.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "protocol/status_macros.h"

namespace binrelay::testing {
inline const absl::Status& ToStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& ToStatus(const absl::StatusOr<T>& s) {
  return s.status();
}
template <typename T>
::testing::AssertionResult IsOkPred(const char* expr, const T& value) {
  const absl::Status& s = ToStatus(value);
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expr << " failed: " << s;
}
}  // namespace binrelay::testing

#define BR_EXPECT_OK(expr) EXPECT_PRED_FORMAT1(::binrelay::testing::IsOkPred, expr)
#define BR_ASSERT_OK(expr) ASSERT_PRED_FORMAT1(::binrelay::testing::IsOkPred, expr)

#define BR_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  ASSERT_TRUE(tmp.ok()) << tmp.status();              \
  lhs = std::move(*tmp)
#define BR_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  BR_ASSERT_OK_AND_ASSIGN_IMPL_(BR_CONCAT_(br_assign_, __LINE__), lhs, expr)
