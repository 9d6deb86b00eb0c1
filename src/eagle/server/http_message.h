#pragma once
// One HTTP request and its response as the server's handlers see them, whatever reads
// the bytes: the event-driven listener (http_listener.h) or the in-memory path the
// fuzz target and tests drive (Server::answer_bytes). Header names compare without
// case (RFC 9110 §5.1); the path is percent-decoded once, '+' kept (one rule for ids
// with '/': `jats%2Fa.nxml` and `jats/a.nxml` name the same document); query values
// are form-decoded ('+' is a space).
#include <cstddef>
#include <map>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace eagle::server {

// One part of a multipart/form-data body (RFC 7578).
struct FormPart {
  std::string name;
  std::string filename;
  std::string content_type;
  std::string content;
};

struct HttpRequest {
  std::string method;
  std::string target;  // as sent: path and query
  std::string path;    // percent-decoded
  std::vector<std::pair<std::string, std::string>> headers;  // in order, names as sent
  std::multimap<std::string, std::string> params;            // the query, decoded
  std::string body;
  std::multimap<std::string, FormPart> files;  // a multipart body's parts (parse_multipart)

  bool has_header(std::string_view name) const;
  // The first value of `name`, or "" when absent.
  std::string get_header_value(std::string_view name) const;
  size_t get_header_value_count(std::string_view name) const;
  bool has_param(const std::string& name) const { return params.count(name) > 0; }
  std::string get_param_value(const std::string& name) const;
  bool is_multipart_form_data() const;
  bool has_file(const std::string& name) const { return files.count(name) > 0; }
  const FormPart& get_file_value(const std::string& name) const;
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type/Length
  std::string body;
  std::string content_type;
  bool chunked = false;  // sent with Transfer-Encoding: chunked (event streams)
  // A streamed body (event streams): run on the worker after the status and headers
  // went out (chunked), each piece sent as it is written. `write` returns false once the
  // client is gone or a piece could not be sent within the write deadline: stop then.
  // body and chunked are ignored when it is set. For HTTP/1.0, HEAD and the in-memory
  // path it runs first and its pieces become the body.
  using Writer = std::function<bool(std::string_view piece)>;
  std::function<void(const Writer& write)> producer;

  void set_header(const std::string& name, const std::string& value);
  std::string get_header_value(std::string_view name) const;
  void set_content(std::string content, std::string type) {
    body = std::move(content);
    content_type = std::move(type);
  }
};

bool iequals(std::string_view a, std::string_view b);

// Splits a request target into the decoded path and query parameters. False when the
// target is not origin-form ("/..."), or a percent escape is malformed or decodes to a
// NUL byte: such a request is a 400.
bool parse_target(std::string_view target, HttpRequest& req);

// Fills req.files from a multipart/form-data body (boundary from Content-Type). At most
// `max_parts` parts. Throws app::RequestError (400, naming what is wrong) on a body
// that is not well-formed.
void parse_multipart(HttpRequest& req, size_t max_parts);

// The response's bytes on the wire: status line, headers (Content-Type, Content-Length
// or chunked framing, Connection: close when `close`), then the body unless `head_only`
// (HEAD: the same headers, no body).
std::string serialize_response(const HttpResponse& res, bool head_only, bool close);

// Runs res.producer (if any) into res.body: the whole stream at once.
void run_producer_inline(HttpResponse& res);

// "OK", "Not Found", ... for a status (the reason phrase; "" for an unknown one).
std::string_view reason_phrase(int status);

}  // namespace eagle::server
