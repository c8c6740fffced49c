#include "http_client.h"

#include <curl/curl.h>

#include <mutex>

#include "absl/strings/str_cat.h"

namespace ntprof::clickhouse {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Answer {
  const std::function<absl::Status(absl::string_view)>* on_line = nullptr;
  long http_code = 0;
  std::string partial;  // an incomplete last line, or the whole body without on_line
  absl::Status callback_status;
};

size_t OnData(char* data, size_t size, size_t n, void* user) {
  auto* answer = static_cast<Answer*>(user);
  const size_t bytes = size * n;
  answer->partial.append(data, bytes);
  if (!answer->on_line) return bytes;
  // An error after the first rows arrives as text in the body with status 200 already sent; only
  // lines are handed on, the rest waits for more data.
  size_t start = 0;
  for (size_t nl; (nl = answer->partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    absl::Status st = (*answer->on_line)(absl::string_view(answer->partial).substr(start, nl - start));
    if (!st.ok()) {
      answer->callback_status = st;
      return 0;  // aborts the transfer
    }
  }
  answer->partial.erase(0, start);
  return bytes;
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > 400) text = text.substr(0, 400) + "...";
  return text;
}

}  // namespace

std::string UrlEncode(absl::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

HttpClient::HttpClient(ServerOptions options) : options_(std::move(options)) {
  GlobalInit();
  while (!options_.url.empty() && options_.url.back() == '/') options_.url.pop_back();
  curl_ = curl_easy_init();
}

HttpClient::~HttpClient() {
  if (curl_) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

absl::Status HttpClient::Execute(absl::string_view sql) { return Post("", sql, nullptr); }

absl::Status HttpClient::Insert(const std::string& table, const std::string& columns,
                                absl::string_view rows) {
  // insert_distributed_sync: into a Distributed table, answer only once every shard has the rows,
  // so an accepted batch is on its shard, not in a queue of the server we talk to.
  const std::string query =
      absl::StrCat("INSERT INTO ", table, " (", columns, ") FORMAT TabSeparated");
  return Post(absl::StrCat("query=", UrlEncode(query), "&insert_distributed_sync=1"), rows,
              nullptr);
}

absl::Status HttpClient::Select(absl::string_view sql,
                                const std::function<absl::Status(absl::string_view)>& on_line) {
  return Post("", sql, &on_line);
}

absl::Status HttpClient::Post(const std::string& url_query, absl::string_view body,
                              const std::function<absl::Status(absl::string_view)>* on_line) {
  CURL* curl = static_cast<CURL*>(curl_);
  if (!curl) return absl::InternalError("curl_easy_init failed");
  curl_easy_reset(curl);
  const std::string url = url_query.empty() ? options_.url + "/" : options_.url + "/?" + url_query;
  Answer answer;
  answer.on_line = on_line;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, OnData);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
  if (!on_line) curl_easy_setopt(curl, CURLOPT_TIMEOUT, options_.timeout_s);
  if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (!options_.user.empty()) {
    curl_easy_setopt(curl, CURLOPT_USERNAME, options_.user.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, options_.password.c_str());
  }
  const CURLcode code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.http_code);
  if (!answer.callback_status.ok()) return answer.callback_status;
  if (code != CURLE_OK) {
    return absl::UnavailableError(
        absl::StrCat("ClickHouse at ", options_.url, ": ", curl_easy_strerror(code)));
  }
  if (answer.http_code != 200) {
    const std::string message = Trimmed(answer.partial);
    // Only errors about the statement or the rows themselves are refusals (retrying cannot help);
    // everything else (a shard away, a timeout, a server starting) is retried by the caller.
    bool refused = answer.http_code == 400;
    for (const char* code : {"Code: 16,", "Code: 26,", "Code: 27,", "Code: 33,", "Code: 53,",
                             "Code: 62,", "Code: 117,"}) {
      refused |= message.rfind(code, 0) == 0;
    }
    const std::string text =
        absl::StrCat("ClickHouse at ", options_.url, " answered HTTP ", answer.http_code, ": ",
                     message);
    return refused ? absl::InvalidArgumentError(text) : absl::UnavailableError(text);
  }
  if (on_line && !answer.partial.empty()) {
    // ClickHouse appends an exception after rows it already streamed.
    if (answer.partial.find("Code: ") != std::string::npos) {
      return absl::InternalError(absl::StrCat("ClickHouse at ", options_.url,
                                              " failed mid-answer: ", Trimmed(answer.partial)));
    }
    return (*on_line)(answer.partial);
  }
  return absl::OkStatus();
}

}  // namespace ntprof::clickhouse
