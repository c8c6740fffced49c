// The stage model (docs/design.md, "Stage model"): turns the stamps of one command (host half,
// target half or both) into stages and their components. Only differences of stamps taken on the same machine are
// ever formed, so host and target clocks never need to agree.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "ntprof/v1/record.pb.h"

namespace ntprof {

enum class Stage : uint8_t {
  kHostBlock,
  kHostDriver,
  kNetwork,
  kTargetDriver,
  kStorage,
  kNetworkAndTarget,  // host recorded alone: H3-H2 as one stage
  kLocalDevice,       // a local block device (no fabric): H1-H5, its driver and the drive
  kEndToEnd,          // host view: H5-H0
  kTargetTotal,       // target recorded alone: T5-T0
  kTargetNetworkWait, // target recorded alone: its waits for data (R2T data, a write's RDMA READ)
  kTargetAckWait,     // target recorded alone, NVMe/RDMA: a read's WRITE+SEND posted -> completed,
                      // i.e. until the host's acknowledgement came back (no data pull)
  kCount,
};

enum class Component : uint8_t {
  kHostBlockSubmit,      // H1-H0
  kHostBlockComplete,    // H5-H4
  kHostDriverSubmit,     // H2-H1
  kHostR2tData,          // host's turn-around of an R2T: R2T received -> data handed
  kHostDriverComplete,   // last reply PDU -> nvme_complete_rq
  kFabric,               // network minus the components below
  kR2tRoundTrip,         // TCP writes with R2T: R2T sent -> data in, less the host's turn-around
  kReadDataTransfer,     // TCP reads: first data PDU -> response capsule, at the host
  kRdmaDataTransfer,     // RDMA READ of a write's data: posted -> completed at the target
  kTargetReceive,        // T1-T0
  kTargetSubmit,         // T2-T1, less the time waiting for data
  kTargetRespond,        // T4-T3
  kTargetSend,           // T5-T4
  kTargetBlockSubmit,    // T2 -> drive issue
  kDrive,                // drive issue -> drive done
  kTargetBlockComplete,  // drive done -> T3
  kCount,
};

inline constexpr size_t kStageCount = static_cast<size_t>(Stage::kCount);
inline constexpr size_t kComponentCount = static_cast<size_t>(Component::kCount);

// Stable JSON ids (docs/design.md, "Stage model") and the labels reports print.
std::string_view StageId(Stage stage);
std::string_view StageLabel(Stage stage, v1::Stack host_stack, v1::Stack target_stack);
std::string_view ComponentId(Component component);
std::string_view ComponentLabel(Component component);
Stage ComponentStage(Component component);

// Which halves a breakdown was computed from.
enum class Scope : uint8_t { kJoined, kHostOnly, kTargetOnly };
std::string_view ScopeId(Scope scope);

// The stages (and components) of one command, in nanoseconds. Unset = does not apply or a hook for
// it was not recorded.
struct CommandBreakdown {
  Scope scope = Scope::kJoined;
  std::array<std::optional<int64_t>, kStageCount> stages{};
  std::array<std::optional<int64_t>, kComponentCount> components{};

  std::optional<int64_t> stage(Stage s) const { return stages[static_cast<size_t>(s)]; }
  std::optional<int64_t> component(Component c) const {
    return components[static_cast<size_t>(c)];
  }
};

// Why a record cannot be broken down: a stamp the stages need was not seen.
struct IncompleteRecord {
  std::string_view missing;  // e.g. "H3 reply received"
};

// Stages in print order for a scope (end to end or target total last).
const std::vector<Stage>& StagesOf(Scope scope);

// host and/or target must be given; when both are, they are the two halves of one command.
// Returns nullopt (and sets *why) when a required stamp is missing.
std::optional<CommandBreakdown> BreakDown(const v1::Record* host, const v1::Record* target,
                                          IncompleteRecord* why = nullptr);

// When a command started on its machine's clock: its earliest stamp (0 = none), of a record or
// of its stamps (the agent's records as BPF gave them).
uint64_t EarliestStamp(const v1::Record& record);
uint64_t EarliestStamp(std::span<const uint64_t> stamps);

}  // namespace ntprof
