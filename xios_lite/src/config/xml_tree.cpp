#include "xml_tree.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <pugixml.hpp>
#include <sstream>

#include "ep/error.hpp"
#include "text.hpp"

namespace xios_lite::config {
namespace {

constexpr int kMaxIncludeDepth = 16;

// `path` without "." components and repeated slashes, as a user writes it
// ("./a/./b.xml" is "a/b.xml"); a relative path stays relative. ".." stays:
// through a symbolic link, "a/.." need not be ".".
std::string clean_path(const std::string& path) {
  std::string out = !path.empty() && path[0] == '/' ? "/" : "";
  std::size_t at = 0;
  while (at <= path.size()) {
    const std::size_t slash = std::min(path.find('/', at), path.size());
    const std::string_view part(path.data() + at, slash - at);
    if (!part.empty() && part != ".") {
      if (!out.empty() && out.back() != '/') {
        out += '/';
      }
      out += part;
    }
    at = slash + 1;
  }
  return out.empty() ? "." : out;
}

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string read_file(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  std::ostringstream text;
  if (ok) {
    text << in.rdbuf();
  }
  return text.str();
}

// One document being turned into elements: its text (for line numbers) and name.
class Reader {
 public:
  Reader(std::string text, std::string name, std::string directory,
         std::vector<std::string> include_stack)
      : text_(std::move(text)),
        name_(std::move(name)),
        directory_(std::move(directory)),
        stack_(std::move(include_stack)) {
    stack_.push_back(clean_path(name_));
  }

  std::unique_ptr<Element> root(const Element* includer) {
    const pugi::xml_parse_result res =
        doc_.load_buffer(text_.data(), text_.size(), pugi::parse_default);
    if (!res) {
      const std::string what = name_ + ":" + std::to_string(line_of(res.offset)) +
                               ": XML syntax error: " + res.description();
      if (includer != nullptr) {
        fail(*includer, "src", what);
      }
      throw ep::Error(ep::ErrorKind::kConfig, kCall, -1, what);
    }
    return convert(doc_.document_element(), nullptr);
  }

 private:
  [[nodiscard]] int line_of(std::ptrdiff_t offset) const {
    if (offset < 0) {
      return 0;
    }
    const auto end = text_.begin() + std::min<std::ptrdiff_t>(offset, std::ssize(text_));
    return 1 + static_cast<int>(std::count(text_.begin(), end, '\n'));
  }

  std::unique_ptr<Element> convert(const pugi::xml_node& node, Element* parent) {
    auto e = std::make_unique<Element>();
    e->name = node.name();
    e->parent = parent;
    e->file = name_;
    e->line = line_of(node.offset_debug());
    std::string src;
    for (const auto& a : node.attributes()) {
      if (std::string_view(a.name()) == "src") {
        src = a.value();
        continue;
      }
      e->attributes.emplace_back(a.name(), a.value());
    }
    std::string text;
    for (const auto& child : node.children()) {
      if (child.type() == pugi::node_pcdata || child.type() == pugi::node_cdata) {
        text += child.value();
      } else if (child.type() == pugi::node_element) {
        e->children.push_back(convert(child, e.get()));
      }
    }
    e->text = std::string(trim(text));
    if (!src.empty()) {
      include(*e, src);
    }
    return e;
  }

  // Splices the root of file `src` into `e`.
  void include(Element& e, const std::string& src) {
    const std::string path =
        clean_path(!src.empty() && src[0] == '/' ? src : directory_ + "/" + src);
    if (static_cast<int>(stack_.size()) >= kMaxIncludeDepth ||
        std::find(stack_.begin(), stack_.end(), path) != stack_.end()) {
      fail(e, "src", "'" + src + "' includes itself (through " + name_ + ")");
    }
    bool ok = false;
    std::string text = read_file(path, ok);
    if (!ok) {
      fail(e, "src", "cannot open '" + path + "'");
    }
    Reader inner(std::move(text), path, directory_of(path), stack_);
    std::unique_ptr<Element> root = inner.root(&e);
    if (root->name != e.name) {
      fail(*root, "",
           "the root of a file included by <" + e.name + "> (" + e.file + ":" +
               std::to_string(e.line) + ") must be <" + e.name + ">");
    }
    for (auto& [name, value] : root->attributes) {
      if (!e.has(name)) {
        e.attributes.emplace_back(name, value);
      }
    }
    std::vector<std::unique_ptr<Element>> children = std::move(root->children);
    for (auto& child : children) {
      child->parent = &e;
    }
    for (auto& child : e.children) {
      children.push_back(std::move(child));
    }
    e.children = std::move(children);
    if (e.text.empty()) {
      e.text = root->text;
    }
  }

  std::string text_;
  std::string name_;
  std::string directory_;
  std::vector<std::string> stack_;
  pugi::xml_document doc_;
};

}  // namespace

const std::string* Element::find(std::string_view attribute) const {
  for (const auto& [name, value] : attributes) {
    if (name == attribute) {
      return &value;
    }
  }
  return nullptr;
}

std::string Element::get(std::string_view attribute, const std::string& fallback) const {
  const std::string* v = find(attribute);
  return v != nullptr ? *v : fallback;
}

std::string Element::where() const {
  std::string out = file + ":" + std::to_string(line) + ": <" + name;
  if (const std::string* id = find("id")) {
    out += " id=\"" + *id + "\"";
  }
  return out + ">";
}

std::vector<const Element*> Element::children_named(std::string_view n) const {
  std::vector<const Element*> out;
  for (const auto& c : children) {
    if (c->name == n) {
      out.push_back(c.get());
    }
  }
  return out;
}

void fail_at(const std::string& where, std::string_view attribute, const std::string& what) {
  std::string msg = where;
  if (!attribute.empty()) {
    msg.append(" attribute ").append(attribute);
  }
  msg.append(": ").append(what);
  throw ep::Error(ep::ErrorKind::kConfig, kCall, -1, msg);
}

void fail(const Element& e, std::string_view attribute, const std::string& what) {
  fail_at(e.where(), attribute, what);
}

std::string message_of(const ep::Error& error) {
  std::string text = error.what();
  const std::string prefix = std::string(kCall) + ": ";
  if (text.compare(0, prefix.size(), prefix) == 0) text.erase(0, prefix.size());
  return text;
}

namespace {

// Whether `e` is a definition (a field of a field_definition or
// field_group, a file of a file_definition, ...), as opposed to an element
// of a file or a <variable> attribute, which belong to their parent.
bool is_definition(const Element& e) {
  if (e.parent == nullptr || e.name == "variable") return false;
  const std::string& p = e.parent->name;
  const std::string base =
      e.name.ends_with("_group") ? e.name.substr(0, e.name.size() - 6) : e.name;
  return p == base + "_definition" || p == base + "_group";
}

// XIOS: a definition's id given twice in a context names one object; the
// later element adds its attributes (overriding) and its children to the
// first one, at the first one's place. Ids are per element name (a domain
// and an axis may share one).
void merge_repeated_ids(Element& context) {
  std::map<std::pair<std::string, std::string>, Element*> first;
  // Visits parent's children from `from` on: a merged element's children
  // join the first one's after it was visited, and are visited there then.
  const std::function<void(Element&, std::size_t)> visit = [&](Element& parent, std::size_t from) {
    for (std::size_t i = from; i < parent.children.size();) {
      Element& e = *parent.children[i];
      const std::string* id = e.find("id");
      if (id != nullptr && is_definition(e)) {
        const auto [it, added] = first.try_emplace({e.name, *id}, &e);
        if (!added) {
          Element& target = *it->second;
          for (const auto& attribute : e.attributes) {
            const std::string& name = attribute.first;
            const auto same = std::find_if(target.attributes.begin(), target.attributes.end(),
                                           [&](const auto& a) { return a.first == name; });
            if (same != target.attributes.end()) {
              same->second = attribute.second;
            } else {
              target.attributes.push_back(attribute);
            }
          }
          if (!e.text.empty()) target.text = e.text;
          // NEMO's field_def files each hold a field_group id="SBC" with a
          // field_group id="SBC_2D" inside, and the same field in both: the
          // moved children merge with the first group's own.
          const std::size_t moved_from = target.children.size();
          for (auto& c : e.children) {
            c->parent = &target;
            target.children.push_back(std::move(c));
          }
          parent.children.erase(parent.children.begin() + static_cast<std::ptrdiff_t>(i));
          visit(target, moved_from);
          continue;
        }
      }
      visit(e, 0);  // in document order: the first of two is always met first
      ++i;
    }
  };
  visit(context, 0);
}

// XIOS names a definition given without an id itself (a field with only a
// field_ref in a field group, say): so does this, in XIOS's form.
void name_anonymous_definitions(Element& context) {
  int n = 0;
  const std::function<void(Element&)> visit = [&](Element& parent) {
    for (auto& c : parent.children) {
      const std::string group = c->name + "_group";
      const std::string definition = c->name + "_definition";
      const bool in_definitions = parent.name == group || parent.name == definition;
      if (in_definitions && !c->has("id")) {
        c->attributes.emplace(c->attributes.begin(), "id",
                              "__" + c->name + "_undef_id_" + std::to_string(n++) + "__");
      }
      visit(*c);
    }
  };
  visit(context);
}

// XIOS 1 put the calendar on the context element (calendar_type,
// start_date, time_origin, timestep); XIOS 2 reads it there still. It
// becomes the <calendar> the parser reads.
void move_context_calendar(Element& ctx) {
  std::vector<std::pair<std::string, std::string>> moved;
  std::erase_if(ctx.attributes, [&](const auto& a) {
    const bool calendar = a.first == "calendar_type" || a.first == "start_date" ||
                          a.first == "time_origin" || a.first == "timestep";
    if (calendar) moved.emplace_back(a.first == "calendar_type" ? "type" : a.first, a.second);
    return calendar;
  });
  if (moved.empty()) return;
  auto cal = std::make_unique<Element>();
  cal->name = "calendar";
  cal->attributes = std::move(moved);
  cal->file = ctx.file;
  cal->line = ctx.line;
  cal->parent = &ctx;
  ctx.children.insert(ctx.children.begin(), std::move(cal));
}

void merge_contexts(Element& root) {
  for (auto& c : root.children) {
    if (c->name == "context") {
      move_context_calendar(*c);
      merge_repeated_ids(*c);
      name_anonymous_definitions(*c);
    }
  }
}

}  // namespace

std::unique_ptr<Element> load_tree(const std::string& text, const std::string& name,
                                   const std::string& directory) {
  Reader reader(text, name, directory, {});
  std::unique_ptr<Element> root = reader.root(nullptr);
  merge_contexts(*root);
  return root;
}

std::unique_ptr<Element> clone(const Element& e, Element* parent) {
  auto copy = std::make_unique<Element>();
  copy->name = e.name;
  copy->attributes = e.attributes;
  copy->text = e.text;
  copy->file = e.file;
  copy->line = e.line;
  copy->parent = parent;
  copy->children.reserve(e.children.size());
  for (const auto& c : e.children) {
    copy->children.push_back(clone(*c, copy.get()));
  }
  return copy;
}

namespace {
void append_node(pugi::xml_node& to, const Element& e) {
  pugi::xml_node node = to.append_child(e.name.c_str());
  for (const auto& [name, value] : e.attributes) {
    node.append_attribute(name.c_str()).set_value(value.c_str());
  }
  if (!e.text.empty()) {
    node.append_child(pugi::node_pcdata).set_value(e.text.c_str());
  }
  for (const auto& c : e.children) {
    append_node(node, *c);
  }
}
}  // namespace

std::string to_xml(const Element& e) {
  pugi::xml_document doc;
  append_node(doc, e);
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default);
  return out.str();
}

std::unique_ptr<Element> load_tree_file(const std::string& path) {
  bool ok = false;
  std::string text = read_file(path, ok);
  if (!ok) {
    throw ep::Error(ep::ErrorKind::kIo, kCall, -1, path + ": cannot open the file");
  }
  return load_tree(text, path, directory_of(path));
}

std::string required(const Element& e, std::string_view attr) {
  const std::string* v = e.find(attr);
  if (v == nullptr || trim(*v).empty()) {
    fail(e, attr, "missing (required)");
  }
  return std::string(trim(*v));
}

long long integer(const Element& e, std::string_view attr, long long lo, long long hi) {
  const std::string text = required(e, attr);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || errno != 0) {
    fail(e, attr, "'" + text + "' is not an integer");
  }
  if (v < lo || v > hi) {
    fail(
        e, attr,
        "value " + text + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return v;
}

double real(const Element& e, std::string_view attr) {
  const std::string text = required(e, attr);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v)) {
    fail(e, attr, "'" + text + "' is not a finite number");
  }
  return v;
}

bool parse_boolean(std::string_view text, bool& out) {
  std::string lower(trim(text));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "true" || lower == ".true.") {
    out = true;
    return true;
  }
  if (lower == "false" || lower == ".false.") {
    out = false;
    return true;
  }
  return false;
}

bool boolean(const Element& e, std::string_view attr) {
  const std::string text = required(e, attr);
  bool v = false;
  if (!parse_boolean(text, v)) {
    fail(e, attr, "value '" + text + "' out of range (expected true or false)");
  }
  return v;
}

bool parse_reals(std::string_view text, std::vector<double>& out, std::string& why) {
  text = trim(text);
  // XIOS's array form: (lo,hi)[x(lo,hi)...][values]
  std::size_t declared = 0;
  if (!text.empty() && text.front() == '(') {
    const auto open = text.find('[');
    const auto close = text.rfind(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      why = quote(text) + " is not an XIOS array (lo,hi)[values]";
      return false;
    }
    std::string_view shape = text.substr(0, open);
    declared = 1;
    while (!shape.empty()) {
      int lo = 0;
      int hi = 0;
      int used = 0;
      const std::string part(shape);
      if (std::sscanf(part.c_str(), " (%d ,%d )%n", &lo, &hi, &used) != 2 || hi < lo) {
        why = quote(text.substr(0, open)) + " is not an XIOS array shape (lo,hi)";
        return false;
      }
      declared *= static_cast<std::size_t>(hi - lo + 1);
      shape.remove_prefix(static_cast<std::size_t>(used));
      shape = trim(shape);
      if (!shape.empty() && shape.front() == 'x') {
        shape.remove_prefix(1);
      }
    }
    text = text.substr(open + 1, close - open - 1);
  }
  std::string words(text);
  std::replace(words.begin(), words.end(), ',', ' ');
  std::istringstream in(words);
  std::string word;
  out.clear();
  while (in >> word) {
    char* end = nullptr;
    const double v = std::strtod(word.c_str(), &end);
    if (end == word.c_str() || *end != '\0' || !std::isfinite(v)) {
      why = quote(word) + " is not a finite number";
      return false;
    }
    out.push_back(v);
  }
  if (declared > 0 && out.size() != declared) {
    why = "the array declares " + std::to_string(declared) + " values and lists " +
          std::to_string(out.size());
    return false;
  }
  return true;
}

std::vector<double> reals(const Element& e, std::string_view attr, std::size_t expected) {
  std::vector<double> out;
  std::string why;
  if (!parse_reals(required(e, attr), out, why)) {
    fail(e, attr, why);
  }
  if (expected > 0 && out.size() != expected) {
    fail(e, attr,
         "has " + std::to_string(out.size()) + " values, expected " + std::to_string(expected));
  }
  return out;
}

Frequency frequency(const Element& e, std::string_view attr) {
  const std::string text = required(e, attr);
  Frequency f;
  if (!parse_frequency(text, f)) {
    fail(e, attr,
         "bad frequency '" + text +
             "' (expected <count><unit>..., unit ts, s, mi, h, d, mo or y, e.g. 6h or 1d12h)");
  }
  return f;
}

}  // namespace xios_lite::config
