// The transport registry: one row per v1 transport, names that parse back, and the argument rules
// with the texts the command line prints.
#include <catch2/catch.hpp>
#include <set>

#include "transports.h"

namespace ntprof::agent {
namespace {

TEST_CASE("every_v1_transport_but_unknown_has_one_row") {
  const google::protobuf::EnumDescriptor* e = v1::Transport_descriptor();
  std::set<v1::Transport> rows;
  for (const TransportRow& row : Transports()) CHECK(rows.insert(row.transport).second);
  for (int i = 0; i < e->value_count(); ++i) {
    const auto t = static_cast<v1::Transport>(e->value(i)->number());
    INFO(e->value(i)->name());
    CHECK(rows.count(t) == (t == v1::TRANSPORT_UNKNOWN ? 0u : 1u));
  }
}

TEST_CASE("every_row_name_parses_back_to_its_transport") {
  for (const TransportRow& row : Transports()) {
    INFO(row.name());
    REQUIRE(ParseTransport(row.name()).has_value());
    CHECK(*ParseTransport(row.name()) == row.transport);
    CHECK((row.host.offered() || row.target.offered()));
    CHECK(row.watch != nullptr);
  }
  CHECK(TransportNames() == std::vector<std::string>{"tcp", "rdma", "local"});
  CHECK(TransportChoices() == "tcp|rdma|local");
  CHECK(TransportHelp() ==
        "tcp (NVMe/TCP), rdma (NVMe/RDMA), or local (a local block device, host role only)");
}

TEST_CASE("transport_names_come_from_the_v1_enum") {
  CHECK(TransportName(v1::TRANSPORT_TCP) == "tcp");
  CHECK(TransportName(v1::TRANSPORT_RDMA) == "rdma");
  CHECK(TransportName(v1::TRANSPORT_LOCAL) == "local");
  CHECK(TransportName(v1::TRANSPORT_UNKNOWN) == "unknown");
  CHECK(TransportName(static_cast<v1::Transport>(99)) == "unknown");  // a newer peer's value
  CHECK_FALSE(ParseTransport("unknown").has_value());
  CHECK_FALSE(ParseTransport("TCP").has_value());
  CHECK_FALSE(ParseTransport("fc").has_value());
  CHECK_FALSE(ParseTransport("").has_value());
}

TEST_CASE("argument_rules_come_from_the_row") {
  CHECK(CheckTransportArguments(Role::kHost, v1::TRANSPORT_TCP, "", true).empty());
  CHECK(CheckTransportArguments(Role::kTarget, v1::TRANSPORT_RDMA, "", true).empty());
  CHECK(CheckTransportArguments(Role::kHost, v1::TRANSPORT_LOCAL, "loop0", true).empty());
  CHECK(CheckTransportArguments(Role::kTarget, v1::TRANSPORT_LOCAL, "loop0", true) ==
        "--transport local: is only for --role host");
  CHECK(CheckTransportArguments(Role::kTarget, v1::TRANSPORT_LOCAL, "", false) ==
        "--transport local: is only for --role host");
  CHECK(CheckTransportArguments(Role::kHost, v1::TRANSPORT_LOCAL, "", true) ==
        "--device (the block device, needed with --transport local) is required");
  CHECK(CheckTransportArguments(Role::kHost, v1::TRANSPORT_LOCAL, "", false).empty());  // probe
  CHECK(CheckTransportArguments(Role::kHost, v1::TRANSPORT_UNKNOWN, "", true) ==
        "--transport unknown: is not supported by this build");
  CHECK(CheckSpdkTransport(v1::TRANSPORT_TCP).empty());
  CHECK(CheckSpdkTransport(v1::TRANSPORT_RDMA).empty());
  CHECK(CheckSpdkTransport(v1::TRANSPORT_LOCAL) ==
        "--transport local: is not an SPDK transport (tcp or rdma)");
}

TEST_CASE("a_role_a_transport_does_not_offer_has_no_hooks_and_no_object") {
  CHECK(HooksFor(Role::kTarget, v1::TRANSPORT_LOCAL).empty());
  auto object = OpenBpfObject(Role::kTarget, v1::TRANSPORT_LOCAL, "");
  REQUIRE_FALSE(object.ok());
  CHECK(object.status().message() == "--transport local: is only for --role host");
}

}  // namespace
}  // namespace ntprof::agent
