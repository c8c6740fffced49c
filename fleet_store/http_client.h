// ClickHouse's HTTP interface through libcurl: one statement per request, the data (INSERT) or
// the query (anything else) in the POST body, errors with ClickHouse's own message.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace ntprof::clickhouse {

struct ServerOptions {
  std::string url;       // http://host:8123 or https://host:8443
  std::string ca_file;   // PEM CA for https (empty: the system's)
  std::string user;      // empty: ClickHouse's default user
  std::string password;
  long timeout_s = 30;   // a whole request, connect included
};

class HttpClient {
 public:
  explicit HttpClient(ServerOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // A statement without result rows (CREATE, ...). UnavailableError when the server cannot be
  // reached; InvalidArgument/Internal with ClickHouse's message when it refused.
  absl::Status Execute(absl::string_view sql);
  // INSERT INTO table (columns) FORMAT TabSeparated with the rows in the body.
  absl::Status Insert(const std::string& table, const std::string& columns, absl::string_view rows);
  // A SELECT; every line of the answer (without its newline) goes to on_line as it arrives.
  absl::Status Select(absl::string_view sql,
                      const std::function<absl::Status(absl::string_view line)>& on_line);

  const ServerOptions& options() const { return options_; }

 private:
  absl::Status Post(const std::string& url_query, absl::string_view body,
                    const std::function<absl::Status(absl::string_view line)>* on_line);

  ServerOptions options_;
  void* curl_ = nullptr;  // CURL*, reused: keeps the connection
};

// The URL of a statement passed in the query string (INSERT) or nothing (body).
std::string UrlEncode(absl::string_view text);

}  // namespace ntprof::clickhouse
