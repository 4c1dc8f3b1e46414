// Locations of the recorded fixtures and the built binary, for tests.
//
// The recorded MySQL/MariaDB binlogs and captures are not in this repository:
// tests/fixtures/MANIFEST lists them with their public origins, and
// scripts/fetch-fixtures.sh downloads them into .fixtures/. A test that reads
// one starts with BINRELAY_REQUIRE_FIXTURE(...) (or BINRELAY_REQUIRE_FIXTURE_DIR
// for a whole folder), so that without the fixtures it is skipped, naming the
// missing file; with them present, a wrong or unreadable fixture still fails it.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

namespace binrelay::testing {

// The folder holding the fixtures, first match wins:
//   1. $BINRELAY_FIXTURES_DIR, if set and not empty (whether or not it exists);
//   2. ../shared/fixtures beside the source tree, if it exists (a machine
//      that keeps the recorded files outside the checkout);
//   3. .fixtures/ in the source tree (what scripts/fetch-fixtures.sh fills).
std::string FixturesDir();
// Path of fixture `relative` (e.g. "zongji/binlog-mysql84.events.binlog").
std::string FixturePath(const std::string& relative);
// Whether fixture `relative` is there as a regular file.
bool FixtureExists(std::string_view relative);
// Whether fixture folder `relative` is there ("" is FixturesDir() itself).
bool FixtureDirExists(std::string_view relative);
// The first of `relatives` that FixtureExists() says is absent, or "".
std::string FirstAbsentFixture(std::initializer_list<std::string_view> relatives);
// The one skip reason: "recorded fixture <path> is absent: run
// scripts/fetch-fixtures.sh (or set BINRELAY_FIXTURES_DIR)".
std::string FixtureAbsentMessage(std::string_view relative);
// Reads a whole file; fails the current test if it cannot.
std::string ReadFileOrDie(const std::string& path);

}  // namespace binrelay::testing

// Skips the current test (GTEST_SKIP, so only in a test body or SetUp) unless
// every fixture named is present: BINRELAY_REQUIRE_FIXTURE("a/x", kSomePath).
#define BINRELAY_REQUIRE_FIXTURE(...)                                                     \
  do {                                                                                    \
    const std::string binrelay_absent_fixture_ =                                          \
        ::binrelay::testing::FirstAbsentFixture({__VA_ARGS__});                           \
    if (!binrelay_absent_fixture_.empty()) {                                              \
      GTEST_SKIP() << ::binrelay::testing::FixtureAbsentMessage(binrelay_absent_fixture_); \
    }                                                                                     \
  } while (0)

// Skips the current test unless fixture folder `relative` is present ("" for
// the whole fixtures folder). A test that loops over a folder must still
// count what it checked and fail when the folder yields nothing.
#define BINRELAY_REQUIRE_FIXTURE_DIR(relative)                                  \
  do {                                                                          \
    if (!::binrelay::testing::FixtureDirExists(relative)) {                     \
      GTEST_SKIP() << ::binrelay::testing::FixtureAbsentMessage(relative);      \
    }                                                                           \
  } while (0)
