// The hook lists and the BPF objects of the transport registry agree both ways, for every role of
// every row: every program a hook's variants name is in the row's object for that role, and every
// program of the object belongs to one of those hooks. The skeletons are opened, not loaded: no root, no BPF needed.
#include <bpf/libbpf.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "transports.h"

namespace ntprof::agent {
namespace {

std::set<std::string> CatalogPrograms(Role role, v1::Transport transport) {
  std::set<std::string> out;
  for (const HookSpec& hook : HooksFor(role, transport)) {
    for (AttachType type : hook.variants) {
      for (const std::string& program : VariantPrograms(hook, type)) out.insert(program);
    }
  }
  return out;
}

std::set<std::string> ObjectPrograms(BpfObjectHandle& object) {
  std::set<std::string> out;
  struct bpf_program* program;
  bpf_object__for_each_program(program, object.object()) out.insert(bpf_program__name(program));
  return out;
}

TEST_CASE("every_hook_program_is_in_its_object_and_every_object_program_has_a_hook") {
  int checked = 0;
  for (const TransportRow& row : Transports()) {
    for (Role role : {Role::kHost, Role::kTarget}) {
      if (!row.side(role).offered()) continue;
      INFO(RoleName(role) << " " << row.name());
      auto object = OpenBpfObject(role, row.transport, "");
      REQUIRE(object.ok());
      const std::set<std::string> catalog = CatalogPrograms(role, row.transport);
      const std::set<std::string> programs = ObjectPrograms(**object);
      REQUIRE_FALSE(catalog.empty());
      for (const std::string& p : catalog) {
        INFO("named by the catalog: " << p);
        CHECK(programs.count(p) == 1);
      }
      for (const std::string& p : programs) {
        INFO("in the object: " << p);
        CHECK(catalog.count(p) == 1);
      }
      ++checked;
    }
  }
  CHECK(checked == 5);  // host and target of tcp and rdma, host of local
}

}  // namespace
}  // namespace ntprof::agent
