//===- options.cc - the house help layout, validators and parse for CLI11 -===//
// CLI11's own help lists every option with its type ("TEXT=syspgo.db") and
// its errors read "--freq: Value 0 not in range". syspgo's commands print
// help the way retsnoop does (usage, a paragraph, options grouped by
// purpose with their defaults and limits, examples) and name in every
// usage error the option, the value given and what is accepted: the
// formatter and validators here make CLI11 do that.
#include "cli/options.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "analyze/data/task_filter.h"
#include "cli/command.h"
#include "common/files.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

constexpr size_t kHelpWidth = 100;  // columns the help is wrapped to
constexpr size_t kMaxNameColumn = 26;  // longer option names put their help on the next line

std::string Num(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// Appends `text` to `out`, wrapped to lines of `width` columns after an
// indent of `indent` (the first line's indent is already written). Line
// breaks in `text` are kept.
void Wrap(const std::string& text, size_t indent, size_t width, std::string* out) {
  size_t room = width > indent + 20 ? width - indent : 20;
  bool first_line = true;
  for (const std::string& para : Split(text, '\n')) {
    if (!first_line) *out += "\n" + std::string(indent, ' ');
    first_line = false;
    size_t col = 0;
    for (const std::string& word : Split(para, ' ')) {
      if (word.empty()) continue;
      if (col && col + 1 + word.size() > room) {
        *out += "\n" + std::string(indent, ' ');
        col = 0;
      }
      if (col) *out += ' ', ++col;
      *out += word;
      col += word.size();
    }
  }
}

// The help of one command: `about`, then each group of options, then the
// footer. An option's line is its names and value name, then its help and
// "(default D, LIMITS)" from its declaration.
class HouseFormatter : public CLI::FormatterBase {
 public:
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    std::string out = app->get_description();
    if (!out.empty() && out.back() != '\n') out += '\n';
    auto options = app->get_options([](const CLI::Option* o) { return o->nonpositional() && !o->get_group().empty(); });
    std::vector<std::string> groups;
    std::map<std::string, std::vector<const CLI::Option*>> by_group;
    std::map<const CLI::Option*, std::string> left;
    size_t column = 0;
    for (const CLI::Option* o : options) {
      if (!by_group.count(o->get_group())) groups.push_back(o->get_group());
      by_group[o->get_group()].push_back(o);
      std::string names;
      for (const std::string& n : Split(o->get_name(false, true), ','))
        names += (names.empty() ? "" : ", ") + n;
      std::string type = Split(o->get_type_name(), ':')[0];
      if (o->get_type_size() != 0 && !type.empty()) names += " " + type;
      left[o] = "  " + names;
      if (left[o].size() + 2 <= kMaxNameColumn) column = std::max(column, left[o].size() + 2);
    }
    for (const std::string& g : groups) {
      out += "\n" + g + ":\n";
      for (const CLI::Option* o : by_group[g]) {
        const std::string& l = left[o];
        out += l;
        if (l.size() + 2 > column) out += "\n" + std::string(column, ' ');
        else out += std::string(column - l.size(), ' ');
        Wrap(o->get_description() + Limits(o), column, kHelpWidth, &out);
        out += '\n';
      }
    }
    std::string footer = app->get_footer();
    if (!footer.empty()) out += "\n" + footer + (footer.back() == '\n' ? "" : "\n");
    return out;
  }

 private:
  // " (default D, LIMITS)": the captured default and the validators'
  // descriptions (which CLI11 appends to the type name after ':').
  static std::string Limits(const CLI::Option* o) {
    std::vector<std::string> parts;
    if (o->get_type_size() != 0 && !o->get_default_str().empty()) parts.push_back("default " + o->get_default_str());
    std::vector<std::string> type = Split(o->get_type_name(), ':');
    for (size_t i = 1; i < type.size(); ++i)
      if (!type[i].empty()) parts.push_back(type[i]);
    std::string s;
    for (const std::string& p : parts) s += (s.empty() ? " (" : ", ") + p;
    return s.empty() ? s : s + ")";
  }
};

// CLI11 prefixes a validator's message with the option's name and ": ";
// syspgo's messages read as one sentence: "--freq needs ...".
std::string OptionSentence(const std::string& what) {
  size_t colon = what.find(": ");
  return colon == std::string::npos ? what : what.substr(0, colon) + " " + what.substr(colon + 2);
}

std::function<void(const CLI::App&)>& Inspector() {
  static std::function<void(const CLI::App&)> inspect;
  return inspect;
}

}  // namespace

void InspectInsteadOfParsing(std::function<void(const CLI::App&)> inspect) { Inspector() = std::move(inspect); }

std::unique_ptr<CLI::App> NewApp(const std::string& name, std::string about, std::string footer) {
  auto app = std::make_unique<CLI::App>(std::move(about), name);
  app->formatter(std::make_shared<HouseFormatter>());
  app->footer(std::move(footer));
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app->set_help_flag();  // added again last (Parse), so that its group comes last
  return app;
}

std::optional<int> Parse(CLI::App& app, const std::vector<std::string>& args, Tail tail,
                         std::vector<std::string>* command) {
  const std::string see = "; see '" + app.get_name() + " --help'";
  if (!app.get_help_ptr()) app.set_help_flag("-h,--help", "this text")->group("Other");
  if (Inspector()) {
    Inspector()(app);
    return 0;
  }
  if (tail == Tail::kNone) app.allow_extras();
  else app.prefix_command();
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));  // CLI11 takes them last first
  } catch (const CLI::CallForHelp&) {
    printf("%s", app.help().c_str());
    return 0;
  } catch (const CLI::ValidationError& e) {
    return UsageError(OptionSentence(e.what()));
  } catch (const CLI::ArgumentMismatch& e) {
    // "--run: 1 required N missing": the value was left out.
    std::string what = e.what();
    if (what.find(" required ") != std::string::npos && what.size() > 8 && what.ends_with(" missing"))
      return UsageError(what.substr(0, what.find(": ")) + " needs a value" + see);
    return UsageError(what + see);
  } catch (const CLI::ParseError& e) {
    return UsageError(e.what() + see);
  } catch (const CLI::Error& e) {  // a declaration CLI11 refused: a bug here, but no exception escapes
    return UsageError(e.what());
  }
  std::vector<std::string> rest = app.remaining();
  if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-' && rest[0] != "--")
    return UsageError("unknown option '" + rest[0] + "'" + see);
  if (tail == Tail::kNone) {
    if (!rest.empty()) return UsageError("unexpected argument '" + rest[0] + "'" + see);
    return std::nullopt;
  }
  if (!rest.empty() && rest[0] == "--") rest.erase(rest.begin());
  else if (!rest.empty() && tail == Tail::kAfterDashes)
    return UsageError("unexpected '" + rest[0] + "'; put the command after '--'");
  if (command) *command = std::move(rest);
  return std::nullopt;
}

CLI::Validator Number(double lo, double hi, const std::string& what) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        double v = s.empty() ? 0 : strtod(s.c_str(), &end);
        if (!s.empty() && !*end && !errno && v >= lo && v <= hi) return "";
        return "needs " + what + " from " + Num(lo) + " to " + Num(hi) + ", got '" + s + "'";
      },
      Num(lo) + ".." + Num(hi));
}

CLI::Validator Whole(uint64_t lo, uint64_t hi, const std::string& what) {
  // A bound as large as the type's (a run number, a pid) is no limit worth
  // printing: such a number says "lo or more".
  bool open = hi >= (uint64_t{1} << 53);
  std::string range = open ? std::to_string(lo) + " or more" : "from " + std::to_string(lo) + " to " + std::to_string(hi);
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        std::string fail = "needs " + what + (open ? ", " : " ") + range + ", got '" + s + "'";
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return fail;
        size_t digits = s.find_first_not_of('0');
        if (digits == std::string::npos) digits = s.size() - 1;
        if (s.size() - digits > 19) return fail;
        uint64_t v = std::stoull(s.substr(digits));
        if (v < lo || v > hi) return fail;
        s = std::to_string(v);
        return "";
      },
      open ? "" : std::to_string(lo) + ".." + std::to_string(hi));
}

std::string OrList(const std::vector<std::string>& choices) {
  std::string s;
  for (size_t i = 0; i < choices.size(); ++i)
    s += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return s;
}

CLI::Validator OneOf(std::vector<std::string> choices) {
  return CLI::Validator(
      [choices](std::string& s) -> std::string {
        for (const std::string& c : choices)
          if (s == c) return "";
        return "is " + OrList(choices) + ", got '" + s + "'";
      },
      "");
}

CLI::Option* Choices(CLI::Option* option, const std::vector<std::string>& choices) {
  std::string name;
  for (const std::string& c : choices) name += (name.empty() ? "" : "|") + c;
  return option->type_name(name)->check(OneOf(choices));
}

CLI::Option* Decimal(CLI::Option* option, const std::string& value, double lo, double hi, const std::string& what) {
  return option->type_name(value)->check(Number(lo, hi, what));
}

CLI::Validator Accepts(std::function<bool(const std::string&)> ok, const std::string& accepted) {
  return CLI::Validator(
      [=](std::string& s) -> std::string { return ok(s) ? "" : "is " + accepted + ", got '" + s + "'"; }, "");
}

CLI::Validator ListOf(std::vector<std::string> choices, const std::string& what) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        for (const std::string& part : Split(s, ',')) {
          std::string name = Trim(part);
          bool known = false;
          for (const std::string& c : choices) known |= c == name;
          if (known) continue;
          std::string all;
          for (const std::string& c : choices) all += (all.empty() ? "" : ", ") + c;
          return "names an unknown " + what + " '" + name + "'; " + what + "s are: " + all;
        }
        return "";
      },
      "");
}

CLI::Validator NonEmpty(const std::string& what) {
  return CLI::Validator([=](std::string& s) -> std::string { return s.empty() ? "needs " + what : ""; }, "");
}

CLI::Option* AddVerbosity(CLI::App& app, int* level, const std::string& help, const std::string& names) {
  return app.add_flag(names, *level, help);
}

CLI::Option* Repeatable(CLI::Option* option) {
  return option->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void AddTaskFilter(CLI::App& app, data::TaskFilter* f, bool with_pid) {
  std::string group = app.option_defaults()->get_group();
  app.option_defaults()->group("Processes (every analysis reads only their rows)");
  if (with_pid)
    app.add_option("--pid", f->pid, "only this process")->type_name("PID")->transform(Whole(1, UINT32_MAX, "a process id"));
  app.add_option("--cgroup", f->cgroup,
                 "only the processes in this cgroup or below it (its path as /proc/PID/cgroup gives it, or its "
                 "directory under /sys/fs/cgroup)")
      ->type_name("PATH")
      ->check(NonEmpty("a cgroup path"));
  app.add_option("--comm", f->comm, "only the processes of this name")->type_name("NAME")->check(NonEmpty("a name"));
  app.add_option("--container", f->container, "only the processes of the container whose id starts with ID")
      ->type_name("ID")
      ->check(NonEmpty("a container id"));
  app.option_defaults()->group(group);
}

CLI::Option* AddJsonSummary(CLI::App& app, std::string* path, const std::string& help) {
  return app.add_option("--json", *path, help)->type_name("FILE")->check(NonEmpty("a file path ('-' for stdout)"));
}

void WriteJsonSummary(const std::string& path, const nlohmann::ordered_json& summary) {
  if (path.empty()) return;
  std::string text = JsonDocument(summary);
  if (path == "-") {
    fputs(text.c_str(), stdout);
    return;
  }
  if (Status st = WriteFileAtomically(path, text); !st.ok())
    Warn("cannot write the JSON summary to " + path + ": " + st.error().message);
}

}  // namespace syspgo::cli
