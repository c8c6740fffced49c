#include "command_row.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "report_builder.h"
#include "stage_model.h"
#include "transport_name.h"

namespace ntprof::clickhouse {
namespace {

// The stored columns (what a row is read back from), before the computed stage columns.
constexpr size_t kStoredColumns = 33;

std::vector<std::string> BuildColumns() {
  std::vector<std::string> c = {
      "session String",         "wall_ns UInt64",        "command_key UInt64",
      "matched UInt8",          "side String",           "sample_rate UInt32",
      "transport String",       "subsystem String",      "cntlid UInt32",
      "qid UInt32",             "cid UInt32",            "opcode UInt32",
      "op String",              "nsid UInt32",           "slba UInt64",
      "nlb UInt32",             "bytes UInt32",          "io_class String",
      "status UInt32",          "host String",           "host_device String",
      "host_stack UInt8",       "host_flags UInt32",     "host_status UInt32",
      "host_clock_ns Int64",    "host_stamps Array(UInt64)",
      "target String",          "target_device String",  "target_stack UInt8",
      "target_flags UInt32",    "target_status UInt32",  "target_clock_ns Int64",
      "target_stamps Array(UInt64)"};
  for (size_t s = 0; s < kStageCount; ++s) {
    c.push_back(absl::StrCat("stage_", std::string(StageId(static_cast<Stage>(s))), " Nullable(Int64)"));
  }
  for (size_t k = 0; k < kComponentCount; ++k) {
    c.push_back(
        absl::StrCat("component_", std::string(ComponentId(static_cast<Component>(k))), " Nullable(Int64)"));
  }
  return c;
}

void Fnv(uint64_t* h, absl::string_view bytes) {
  for (unsigned char b : bytes) {
    *h ^= b;
    *h *= 1099511628211ull;
  }
  *h ^= 0xff;  // field separator: ("ab","c") and ("a","bc") differ
  *h *= 1099511628211ull;
}

uint64_t FirstStamp(const v1::Record& r) {
  uint64_t first = 0;
  for (uint64_t s : r.stamps()) {
    if (s != 0 && (first == 0 || s < first)) first = s;
  }
  return first;
}

std::string Stamps(const v1::Record* r) {
  if (!r) return "[]";
  return absl::StrCat("[", absl::StrJoin(r->stamps(), ","), "]");
}

std::string Optional(const std::optional<int64_t>& v) { return v ? absl::StrCat(*v) : "\\N"; }

std::string Unescape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    switch (char c = text[++i]) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case '0': out += '\0'; break;
      default: out += c;
    }
  }
  return out;
}

template <typename T>
bool Number(absl::string_view text, T* out) {
  if constexpr (sizeof(T) == 8 && std::is_signed_v<T>) {
    int64_t v;
    if (!absl::SimpleAtoi(text, &v)) return false;
    *out = v;
  } else if constexpr (sizeof(T) == 8) {
    uint64_t v;
    if (!absl::SimpleAtoi(text, &v)) return false;
    *out = v;
  } else {
    uint32_t v;
    if (!absl::SimpleAtoi(text, &v)) return false;
    *out = static_cast<T>(v);
  }
  return true;
}

bool ParseStamps(absl::string_view text, v1::Record* r) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return false;
  text = text.substr(1, text.size() - 2);
  if (text.empty()) return true;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    uint64_t v;
    if (!absl::SimpleAtoi(part, &v)) return false;
    r->add_stamps(v);
  }
  return true;
}

}  // namespace

const std::vector<std::string>& ColumnDefinitions() {
  static const std::vector<std::string> columns = BuildColumns();
  return columns;
}

std::string ColumnList() {
  std::vector<std::string> names;
  for (const std::string& c : ColumnDefinitions()) names.push_back(c.substr(0, c.find(' ')));
  return absl::StrJoin(names, ", ");
}

std::string EscapeTsv(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\0"; break;
      default: out += c;
    }
  }
  return out;
}

uint64_t CommandKey(const std::string& session, const v1::Record* host, const v1::Record* target) {
  const v1::Record& id = host ? *host : *target;
  uint64_t h = 14695981039346656037ull;
  Fnv(&h, session);
  Fnv(&h, id.subsys_nqn());
  Fnv(&h, absl::StrCat(id.cntlid(), "/", id.qid(), "/", id.cid()));
  for (const v1::Record* side : {host, target}) {
    Fnv(&h, side ? absl::StrCat(side->agent(), "@", FirstStamp(*side)) : "-");
  }
  return h;
}

std::string EncodeRow(const CommandContext& context, const v1::Record* host,
                      const v1::Record* target) {
  const v1::Record& id = host ? *host : *target;
  const uint64_t wall = host ? FirstStamp(*host) + context.host_clock_ns
                             : FirstStamp(*target) + context.target_clock_ns;
  const std::string op = OpName(id.opcode());
  std::vector<std::string> f;
  f.reserve(ColumnDefinitions().size());
  f.push_back(EscapeTsv(context.session));
  f.push_back(absl::StrCat(wall));
  f.push_back(absl::StrCat(CommandKey(context.session, host, target)));
  f.push_back(host && target ? "1" : "0");
  f.push_back(host && target ? "joined" : host ? "host" : "target");
  f.push_back(absl::StrCat(context.sample_rate));
  f.push_back(TransportName(id.transport()));
  f.push_back(EscapeTsv(id.subsys_nqn()));
  for (uint64_t v : {uint64_t{id.cntlid()}, uint64_t{id.qid()}, uint64_t{id.cid()},
                     uint64_t{id.opcode()}}) {
    f.push_back(absl::StrCat(v));
  }
  f.push_back(op);
  for (uint64_t v : {uint64_t{id.nsid()}, id.slba(), uint64_t{id.nlb()}, uint64_t{id.bytes()}}) {
    f.push_back(absl::StrCat(v));
  }
  f.push_back(absl::StrCat(op, "-", SizeName(id.bytes())));
  f.push_back(absl::StrCat(host && host->status() != 0 ? host->status()
                           : target                    ? target->status()
                                                       : id.status()));
  for (const auto& [r, clock] : {std::pair{host, context.host_clock_ns},
                                 std::pair{target, context.target_clock_ns}}) {
    f.push_back(r ? EscapeTsv(r->agent()) : "");
    f.push_back(r ? EscapeTsv(r->device()) : "");
    f.push_back(absl::StrCat(r ? static_cast<int>(r->stack()) : 0));
    f.push_back(absl::StrCat(r ? r->flags() : 0));
    f.push_back(absl::StrCat(r ? r->status() : 0));
    f.push_back(absl::StrCat(r ? clock : 0));
    f.push_back(Stamps(r));
  }
  const auto breakdown = BreakDown(host, target);
  for (size_t s = 0; s < kStageCount; ++s) {
    f.push_back(breakdown ? Optional(breakdown->stages[s]) : "\\N");
  }
  for (size_t k = 0; k < kComponentCount; ++k) {
    f.push_back(breakdown ? Optional(breakdown->components[k]) : "\\N");
  }
  std::string line = absl::StrJoin(f, "\t");
  line += '\n';
  return line;
}

absl::StatusOr<StoredCommand> DecodeRow(absl::string_view line) {
  std::vector<absl::string_view> f = absl::StrSplit(line, '\t');
  if (f.size() < kStoredColumns) {
    return absl::DataLossError(
        absl::StrCat("a row of ", f.size(), " columns, expected at least ", kStoredColumns));
  }
  StoredCommand c;
  c.context.session = Unescape(f[0]);
  const std::string side = Unescape(f[4]);
  bool ok = Number(f[5], &c.context.sample_rate);
  v1::Record id;
  const auto transport = TransportByName(Unescape(f[6]));
  id.set_transport(transport.value_or(v1::TRANSPORT_UNKNOWN));
  id.set_subsys_nqn(Unescape(f[7]));
  // Each reads column i as a number; a column that is not one makes the row unreadable.
  auto u32 = [&](size_t i) {
    uint32_t v = 0;
    ok = Number(f[i], &v) && ok;
    return v;
  };
  auto u64 = [&](size_t i) {
    uint64_t v = 0;
    ok = Number(f[i], &v) && ok;
    return v;
  };
  id.set_cntlid(u32(8));
  id.set_qid(u32(9));
  id.set_cid(u32(10));
  id.set_opcode(u32(11));
  id.set_nsid(u32(13));
  id.set_slba(u64(14));
  id.set_nlb(u32(15));
  id.set_bytes(u32(16));
  for (int s = 0; s < 2; ++s) {
    const bool wanted = side == "joined" || side == (s == 0 ? "host" : "target");
    if (!wanted) continue;
    const size_t base = s == 0 ? 19 : 26;
    v1::Record r = id;
    r.set_role(s == 0 ? v1::ROLE_HOST : v1::ROLE_TARGET);
    r.set_agent(Unescape(f[base]));
    r.set_device(Unescape(f[base + 1]));
    r.set_stack(static_cast<v1::Stack>(u32(base + 2)));
    r.set_flags(u32(base + 3));
    r.set_status(u32(base + 4));
    ok = Number(f[base + 5], s == 0 ? &c.context.host_clock_ns : &c.context.target_clock_ns) && ok;
    ok = ParseStamps(f[base + 6], &r) && ok;
    (s == 0 ? c.host : c.target) = std::move(r);
  }
  if (!ok || (!c.host && !c.target)) {
    return absl::DataLossError(absl::StrCat("unreadable row: ", line.substr(0, 200)));
  }
  return c;
}

}  // namespace ntprof::clickhouse
