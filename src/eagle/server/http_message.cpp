#include "eagle/server/http_message.h"

#include <cctype>
#include <cstdio>

#include "eagle/app/request_json.h"

namespace eagle::server {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `in` into `out`; '+' becomes a space when `plus_is_space` (a query).
// False on a malformed escape or a NUL byte.
bool percent_decode(std::string_view in, bool plus_is_space, std::string& out) {
  out.clear();
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      const int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      c = static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return false;
    out.push_back(c);
  }
  return true;
}

[[noreturn]] void bad_form(const std::string& message) {
  throw app::RequestError{400, "invalid_argument", "the multipart body: " + message, ""};
}

// A header parameter's value in `text` ("form-data; name=\"file\"; filename=\"a.pdf\""),
// quoted (backslash escapes) or a bare token; nullopt-like empty `found` when absent.
bool header_param(std::string_view text, std::string_view key, std::string& value) {
  size_t pos = text.find(';');
  while (pos != std::string_view::npos) {
    ++pos;
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
    const size_t eq = text.find('=', pos);
    if (eq == std::string_view::npos) return false;
    std::string_view name = text.substr(pos, eq - pos);
    while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
    size_t v = eq + 1;
    while (v < text.size() && (text[v] == ' ' || text[v] == '\t')) ++v;
    std::string parsed;
    size_t next;
    if (v < text.size() && text[v] == '"') {
      size_t i = v + 1;
      for (; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        parsed.push_back(text[i]);
      }
      if (i >= text.size()) bad_form("an unterminated quoted value in '" + std::string(text) + "'");
      next = text.find(';', i + 1);
    } else {
      next = text.find(';', v);
      std::string_view raw = text.substr(v, next == std::string_view::npos ? std::string_view::npos : next - v);
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
      parsed.assign(raw);
    }
    if (iequals(name, key)) {
      value = std::move(parsed);
      return true;
    }
    pos = next;
  }
  return false;
}

std::string clean_header_text(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v)
    if (c != '\r' && c != '\n') out.push_back(c);
  return out;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

bool HttpRequest::has_header(std::string_view name) const { return get_header_value_count(name) > 0; }

std::string HttpRequest::get_header_value(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return v;
  return {};
}

size_t HttpRequest::get_header_value_count(std::string_view name) const {
  size_t n = 0;
  for (const auto& [k, v] : headers) n += iequals(k, name) ? 1 : 0;
  return n;
}

std::string HttpRequest::get_param_value(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

bool HttpRequest::is_multipart_form_data() const {
  const std::string type = get_header_value("Content-Type");
  constexpr std::string_view kMultipart = "multipart/form-data";
  return type.size() >= kMultipart.size() && iequals(std::string_view(type).substr(0, kMultipart.size()), kMultipart);
}

const FormPart& HttpRequest::get_file_value(const std::string& name) const {
  static const FormPart kNone;
  auto it = files.find(name);
  return it == files.end() ? kNone : it->second;
}

void HttpResponse::set_header(const std::string& name, const std::string& value) {
  for (auto& [k, v] : headers)
    if (iequals(k, name)) {
      v = value;
      return;
    }
  headers.emplace_back(name, value);
}

std::string HttpResponse::get_header_value(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (iequals(k, name)) return v;
  return {};
}

bool parse_target(std::string_view target, HttpRequest& req) {
  if (target.empty() || target[0] != '/') return false;
  const size_t q = target.find('?');
  if (!percent_decode(target.substr(0, q), false, req.path)) return false;
  req.params.clear();
  if (q == std::string_view::npos) return true;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    std::string key, value;
    if (!percent_decode(pair.substr(0, eq), true, key)) return false;
    if (eq != std::string_view::npos && !percent_decode(pair.substr(eq + 1), true, value)) return false;
    req.params.emplace(std::move(key), std::move(value));
  }
  return true;
}

void parse_multipart(HttpRequest& req, size_t max_parts) {
  req.files.clear();
  std::string boundary;
  const std::string type = req.get_header_value("Content-Type");
  if (!header_param(type, "boundary", boundary) || boundary.empty() || boundary.size() > 70)
    bad_form("Content-Type names no boundary (of 1 to 70 characters)");
  const std::string_view body = req.body;
  const std::string delimiter = "--" + boundary;
  const std::string next_delimiter = "\r\n" + delimiter;
  size_t pos;
  if (body.substr(0, delimiter.size()) == delimiter) {
    pos = delimiter.size();
  } else {
    const size_t first = body.find(next_delimiter);
    if (first == std::string_view::npos) bad_form("no part starts with the boundary");
    pos = first + next_delimiter.size();
  }
  for (;;) {
    if (body.substr(pos, 2) == "--") return;  // the close delimiter
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;  // transport padding
    if (body.substr(pos, 2) != "\r\n") bad_form("a boundary line does not end with CRLF");
    pos += 2;
    if (req.files.size() >= max_parts) bad_form("more than " + std::to_string(max_parts) + " parts");
    size_t content_start;
    std::string_view head;
    if (body.substr(pos, 2) == "\r\n") {
      content_start = pos + 2;
    } else {
      const size_t head_end = body.find("\r\n\r\n", pos);
      if (head_end == std::string_view::npos) bad_form("a part's headers do not end");
      head = body.substr(pos, head_end - pos);
      content_start = head_end + 4;
    }
    FormPart part;
    bool disposition = false;
    while (!head.empty()) {
      const size_t eol = head.find("\r\n");
      std::string_view line = head.substr(0, eol);
      head = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
      const size_t colon = line.find(':');
      if (colon == std::string_view::npos) bad_form("a part's header line has no ':'");
      std::string_view name = line.substr(0, colon), value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      if (iequals(name, "Content-Disposition")) {
        constexpr std::string_view kFormData = "form-data";
        if (value.size() < kFormData.size() || !iequals(value.substr(0, kFormData.size()), kFormData))
          bad_form("a part's Content-Disposition is not form-data");
        disposition = true;
        header_param(value, "name", part.name);
        header_param(value, "filename", part.filename);
      } else if (iequals(name, "Content-Type")) {
        part.content_type.assign(value);
      }
    }
    if (!disposition || part.name.empty()) bad_form("a part has no Content-Disposition with a name");
    const size_t content_end = body.find(next_delimiter, content_start);
    if (content_end == std::string_view::npos) bad_form("part '" + part.name + "' is not closed by the boundary");
    part.content.assign(body.substr(content_start, content_end - content_start));
    pos = content_end + next_delimiter.size();
    std::string key = part.name;
    req.files.emplace(std::move(key), std::move(part));
  }
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

std::string serialize_response(const HttpResponse& res, bool head_only, bool close) {
  std::string out;
  out.reserve(256 + (head_only ? 0 : res.body.size() + 32));
  out += "HTTP/1.1 " + std::to_string(res.status) + " ";
  out += reason_phrase(res.status);
  out += "\r\n";
  bool said_close = false;
  for (const auto& [k, v] : res.headers) {
    if (iequals(k, "Content-Length") || iequals(k, "Transfer-Encoding") || iequals(k, "Content-Type")) continue;
    if (iequals(k, "Connection")) {
      if (!close) continue;
      said_close = true;
    }
    out += clean_header_text(k) + ": " + clean_header_text(v) + "\r\n";
  }
  if (!res.content_type.empty()) out += "Content-Type: " + clean_header_text(res.content_type) + "\r\n";
  if (res.chunked)
    out += "Transfer-Encoding: chunked\r\n";
  else
    out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  if (close && !said_close) out += "Connection: close\r\n";
  out += "\r\n";
  if (head_only) return out;
  if (!res.chunked) return out + res.body;
  if (!res.body.empty()) {
    char size[24];
    std::snprintf(size, sizeof size, "%zx\r\n", res.body.size());
    out += size;
    out += res.body;
    out += "\r\n";
  }
  out += "0\r\n\r\n";
  return out;
}

void run_producer_inline(HttpResponse& res) {
  if (!res.producer) return;
  auto producer = std::move(res.producer);
  res.producer = nullptr;
  producer([&res](std::string_view piece) {
    res.body.append(piece);
    return true;
  });
}

}  // namespace eagle::server
