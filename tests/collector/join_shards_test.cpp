// JoinShards: the live join on several threads, commands divided by subsystem NQN. Ground truth:
// records of known commands; every command must come out joined exactly once, each subsystem's
// commands in one shard, and nothing submitted may hide from WithShard.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "join_shards.h"
#include "record_factory.h"

using namespace ntprof;
using namespace ntprof::collector;
using namespace ntprof::testing;

namespace {

constexpr int kSubsystems = 16;
constexpr int kPerSubsystem = 64;

CommandId Command(int i) {
  return CommandId{.nqn = "nqn.2024-01.io.ntprof:subsystem-" + std::to_string(i % kSubsystems),
                   .cid = static_cast<uint32_t>(i / kSubsystems % 8),  // cids reused in a queue
                   .slba = static_cast<uint64_t>(i) * 8};
}

v1::Record Half(v1::Role role, int i) {
  const uint64_t t = 1'000'000 + static_cast<uint64_t>(i) * 10'000;
  return role == v1::ROLE_HOST
             ? MakeRecord(role, Command(i), HostStamps(t, 300, 800, 30'000, 470, 200), "nvme0n1")
             : MakeRecord(role, Command(i), TargetStamps(t, 200, 300, 20'000, 210, 300), "nullb0");
}

// What the sinks saw: which shard's join and which thread brought each outcome.
struct Outcomes {
  std::mutex mu;
  std::multiset<uint64_t> matched;  // slba of each joined command
  int leftovers = 0;
  std::map<std::string, std::set<size_t>> shards_of_subsystem;
  std::set<std::thread::id> threads;

  JoinEngine::Sink Sink(size_t shard) {
    return [this, shard](const v1::Record* host, const v1::Record* target) {
      std::lock_guard lock(mu);
      const v1::Record& any = host ? *host : *target;
      shards_of_subsystem[any.subsys_nqn()].insert(shard);
      threads.insert(std::this_thread::get_id());
      if (host && target) {
        CHECK(host->slba() == target->slba());
        matched.insert(host->slba());
      } else {
        ++leftovers;
      }
    };
  }
};

// One LiveJoin per shard, as a session has.
std::vector<std::unique_ptr<LiveJoin>> Joins(const JoinShards& shards, Outcomes* outcomes) {
  std::vector<std::unique_ptr<LiveJoin>> joins;
  for (size_t i = 0; i < shards.size(); ++i) {
    joins.push_back(std::make_unique<LiveJoin>(true, JoinOptions{}, outcomes->Sink(i)));
  }
  return joins;
}

// Submits the halves of commands [first, last) in batches of 32, as an agent stream would.
void SubmitHalves(JoinShards& shards, std::vector<std::unique_ptr<LiveJoin>>& joins, v1::Role role,
                  int first, int last) {
  std::vector<LiveJoin*> by_shard;
  for (auto& join : joins) by_shard.push_back(join.get());
  for (int start = first; start < last; start += 32) {
    auto batch = std::make_shared<JoinShards::Records>();
    for (int i = start; i < std::min(start + 32, last); ++i) *batch->Add() = Half(role, i);
    shards.Submit(by_shard, batch, 0);
  }
}

}  // namespace

TEST_CASE("join_shards_join_every_command_once_each_subsystem_in_one_shard") {
  constexpr int kCommands = kSubsystems * kPerSubsystem;
  for (size_t threads : {size_t{1}, size_t{3}}) {
    CAPTURE(threads);
    Outcomes outcomes;
    // A small queue bound: producers wait for the shard threads many times over.
    JoinShards shards(threads, /*max_queued=*/16);
    auto joins = Joins(shards, &outcomes);
    // Host and target halves interleaved batch by batch, from two producer threads.
    std::thread host([&] { SubmitHalves(shards, joins, v1::ROLE_HOST, 0, kCommands); });
    SubmitHalves(shards, joins, v1::ROLE_TARGET, 0, kCommands);
    const std::thread::id host_id = host.get_id();
    host.join();
    size_t pending = 0;
    for (size_t s = 0; s < shards.size(); ++s) {
      shards.WithShard(s, [&] { pending += joins[s]->pending(); });
    }
    CHECK(pending == 0);
    std::lock_guard lock(outcomes.mu);
    CHECK(outcomes.leftovers == 0);
    REQUIRE(outcomes.matched.size() == static_cast<size_t>(kCommands));
    for (int i = 0; i < kCommands; ++i) CHECK(outcomes.matched.count(uint64_t(i) * 8) == 1);
    std::set<size_t> shards_used;
    for (const auto& [nqn, shards_of] : outcomes.shards_of_subsystem) {
      CAPTURE(nqn);
      CHECK(shards_of.size() == 1);  // a subsystem's commands all meet in one shard
      shards_used.insert(shards_of.begin(), shards_of.end());
    }
    CHECK(shards_used.size() == threads);  // 16 subsystems spread over every shard
    if (threads > 1) {
      // The producers waited for room (16 records) many times: the shards' own threads joined.
      const std::set<std::thread::id> submitters{std::this_thread::get_id(), host_id};
      CHECK(std::any_of(outcomes.threads.begin(), outcomes.threads.end(),
                        [&](std::thread::id id) { return submitters.count(id) == 0; }));
    }
  }
}

TEST_CASE("join_shards_with_shard_sees_every_record_already_submitted") {
  Outcomes outcomes;
  JoinShards shards(2);
  auto joins = Joins(shards, &outcomes);
  SubmitHalves(shards, joins, v1::ROLE_HOST, 0, 500);  // no other half: all wait in the joins
  size_t pending = 0;
  for (size_t s = 0; s < shards.size(); ++s) {
    shards.WithShard(s, [&] { pending += joins[s]->pending(); });
  }
  CHECK(pending == 500);
  for (size_t s = 0; s < shards.size(); ++s) {
    shards.WithShard(s, [&] { joins[s]->Flush(); });
  }
  std::lock_guard lock(outcomes.mu);
  CHECK(outcomes.leftovers == 500);
  CHECK(outcomes.matched.empty());
}

TEST_CASE("join_shards_run_what_is_queued_before_they_stop") {
  Outcomes outcomes;
  std::vector<std::unique_ptr<LiveJoin>> joins;
  {
    JoinShards shards(4);
    joins = Joins(shards, &outcomes);
    SubmitHalves(shards, joins, v1::ROLE_HOST, 0, 1000);
    SubmitHalves(shards, joins, v1::ROLE_TARGET, 0, 1000);
  }  // destroyed at once, queues possibly full
  CHECK(outcomes.matched.size() == 1000);
}
