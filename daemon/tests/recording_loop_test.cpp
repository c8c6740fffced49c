// How long the recording loop may wait in one poll (PollWaitMs): until the interval ends or the
// recording's end, whichever comes first, but never longer than kMaxPollWaitMs.
#include <catch2/catch.hpp>
#include <cstdint>

#include "recording_loop.h"

namespace ntprof::agent {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kNow = 5'000 * kMs;
constexpr uint64_t kNever = UINT64_MAX;

TEST_CASE("a poll waits until the interval ends") {
  CHECK(PollWaitMs(kNow, kNow + 250 * kMs, kNever) == 250);
}

TEST_CASE("a poll waits no longer than the recording's end") {
  CHECK(PollWaitMs(kNow, kNow + 900 * kMs, kNow + 40 * kMs) == 40);
}

TEST_CASE("a poll is capped so that a stop from another thread is seen within a second") {
  CHECK(PollWaitMs(kNow, kNow + 3600'000 * kMs, kNever) == kMaxPollWaitMs);
}

TEST_CASE("a deadline reached or passed polls without waiting") {
  CHECK(PollWaitMs(kNow, kNow, kNever) == 0);
  CHECK(PollWaitMs(kNow, kNow - 7 * kMs, kNever) == 0);
}

TEST_CASE("a wait that is not a whole number of milliseconds is rounded up, not down to a spin") {
  CHECK(PollWaitMs(kNow, kNow + 1, kNever) == 1);
  CHECK(PollWaitMs(kNow, kNow + 2 * kMs + 1, kNever) == 3);
}

}  // namespace
}  // namespace ntprof::agent
