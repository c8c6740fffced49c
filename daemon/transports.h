// The transport registry: one row per transport the agent records (NVMe/TCP, NVMe/RDMA, a local
// block device). Everything that differs between transports is in its row - the names, the roles
// it offers, the BPF object and the hooks of each role, which devices a recording
// watches, the argument rules - and the command line, the hook plan, the recorder, the Agent
// service and the converters read it from here. The transport itself is ntprof::v1::Transport
// (the record's enum; bpf/ntprof_record.h's NTPROF_TRANSPORT_* are checked against it), its name
// ntprof::TransportName (core/transport_name.h). Adding a transport: docs/architecture.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bpf_object_handle.h"
#include "hook_catalog.h"
#include "nvme_sysfs.h"
#include "ntprof/v1/record.pb.h"
#include "session_options.h"
#include "transport_name.h"

namespace ntprof::agent {

// What a recording watches on this machine, re-read every interval.
struct WatchedDevices {
  std::vector<uint32_t> devices;  // kernel dev_t of the block devices recorded (empty: none)
  bool present = true;  // false: the device asked for is not there (any more)
};

// How one role records on a transport. A role the transport does not offer has no object.
struct TransportRole {
  OpenBpfObjectFn open_bpf_object = nullptr;
  std::vector<HookSpec> (*hooks)() = nullptr;

  bool offered() const { return open_bpf_object != nullptr; }
};

struct TransportRow {
  v1::Transport transport;
  const char* display_name;  // "NVMe/TCP": in messages
  TransportRole host;
  TransportRole target;
  // A recording names the one block device it records (--device); there is no fabric, so no
  // subsystem NQN or controller to resolve.
  bool local_device = false;
  bool spdk = false;  // SPDK's user-space stack also speaks it (ntprofd record --spdk-...)
  // Its BPF objects turn struct page pointers into addresses (NVMe/TCP PDU headers handed to TCP
  // as pages): the agent looks up vmemmap_base and page_offset_base in kallsyms for them. Other
  // transports skip that read of the whole listing at start.
  bool page_addresses = false;
  // The devices a recording of `role` watches; `device` = the one asked for or "". host_view is
  // sysfs's NVMe view as the recorder last read it for its identities: one read of sysfs serves
  // both (each read is dozens of files, and it is most of what an idle agent costs).
  WatchedDevices (*watch)(Role role, const std::string& device,
                          const NvmeHostView& host_view) = nullptr;

  const TransportRole& side(Role role) const { return role == Role::kHost ? host : target; }
  std::string name() const { return TransportName(transport); }  // "tcp"
};

// Every row, in the order the command line lists them.
const std::vector<TransportRow>& Transports();
// The row of `transport`; nullptr when this build has none (TRANSPORT_UNKNOWN, a newer peer's).
const TransportRow* FindTransport(v1::Transport transport);
// The transport of a command line's name ("tcp"), when it has a row.
std::optional<v1::Transport> ParseTransport(const std::string& name);

// The names for --transport: {"tcp", "rdma", "local"}; "tcp|rdma|local" for synopses; the help
// text "tcp (NVMe/TCP), rdma (NVMe/RDMA), or local (a local block device, host role only)".
std::vector<std::string> TransportNames();
std::string TransportChoices();
std::string TransportHelp();

// The argument rules of a kernel recording (record, serve, the Agent service) or of a plan
// (probe: recording = false, no device needed), from the transport's row: "" when they hold, else
// what is wrong, as the command line prints it ("--transport local: is only for --role host").
std::string CheckTransportArguments(Role role, v1::Transport transport, const std::string& device,
                                    bool recording);
// For ntprofd record --spdk-...: "" when SPDK speaks `transport`, else what is wrong.
std::string CheckSpdkTransport(v1::Transport transport);

// The hooks of a role on a transport (empty when the row does not offer the role), and its BPF
// object, opened (not loaded). btf_path: external kernel BTF for CO-RE ("" = the running kernel's).
std::vector<HookSpec> HooksFor(Role role, v1::Transport transport);
absl::StatusOr<std::unique_ptr<BpfObjectHandle>> OpenBpfObject(Role role, v1::Transport transport,
                                                               const std::string& btf_path);

}  // namespace ntprof::agent
