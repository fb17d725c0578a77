//===- completion.cc - shell completion written from the option tables ---===//
#include "cli/completion.h"

#include <string>
#include <utility>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "common/util.h"

namespace syspgo::cli {
namespace {

// What completion needs of one command's options.
struct OptionTable {
  std::string command;
  std::string names;   // every option name, space-separated
  std::string valued;  // the names that take a value
  std::vector<std::pair<std::string, std::string>> choices;  // name, its values space-separated
};

// Runs the command with Parse inspecting its app instead of parsing
// (options.h), so nothing but the declarations runs.
OptionTable ReadOptions(const Command& c) {
  OptionTable t{c.name, "", "", {}};
  InspectInsteadOfParsing([&t](const CLI::App& app) {
    for (const CLI::Option* o : app.get_options()) {
      if (!o->nonpositional()) continue;
      std::string values = Split(o->get_type_name(), ':')[0];
      bool listed = values.find('|') != std::string::npos;
      for (char& ch : values) ch = ch == '|' ? ' ' : ch;
      for (const std::string& n : Split(o->get_name(false, true), ',')) {
        t.names += (t.names.empty() ? "" : " ") + n;
        if (o->get_expected_max() == 0) continue;  // a flag
        t.valued += (t.valued.empty() ? "" : " ") + n;
        if (listed) t.choices.push_back({n, values});
      }
    }
  });
  c.fn({});
  InspectInsteadOfParsing(nullptr);
  return t;
}

// The part of the script that does not depend on the commands: $1 is the
// command, $2 the index of its first argument in COMP_WORDS.
constexpr char kBashComplete[] = R"sh(_syspgo_complete() {
  local cmd=$1 first=$2 cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i values
  for ((i = first; i < COMP_CWORD; i++)); do
    if [[ ${COMP_WORDS[i]} == -- ]]; then  # the program to run, then its arguments
      if ((i + 1 == COMP_CWORD)); then mapfile -t COMPREPLY < <(compgen -c -- "$cur")
      else mapfile -t COMPREPLY < <(compgen -f -- "$cur"); fi
      return
    fi
  done
  if ((COMP_CWORD > first)) && [[ " $(_syspgo_valued "$cmd") " == *" $prev "* ]]; then
    values=$(_syspgo_choices "$cmd" "$prev")
    if [[ -n $values ]]; then mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
    else mapfile -t COMPREPLY < <(compgen -f -- "$cur"); fi
    return
  fi
  if [[ $cur == -* ]]; then mapfile -t COMPREPLY < <(compgen -W "$(_syspgo_options "$cmd")" -- "$cur")
  else mapfile -t COMPREPLY < <(compgen -f -- "$cur"); fi
}
_syspgo() {
  if ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "$_syspgo_commands --help --version" -- "${COMP_WORDS[1]}")
  else
    _syspgo_complete "${COMP_WORDS[1]}" 2
  fi
}
_syspgo_prefetch() { _syspgo_complete prefetch 1; }
complete -o filenames -F _syspgo syspgo
complete -o filenames -F _syspgo_prefetch syspgo-prefetch
)sh";

void PrintBash(const std::vector<OptionTable>& tables, FILE* out) {
  fprintf(out,
          "# bash completion for syspgo and syspgo-prefetch, written by `syspgo --completion bash` from the\n"
          "# commands' option tables.\n");
  std::string commands;
  for (const OptionTable& t : tables) commands += (commands.empty() ? "" : " ") + t.command;
  fprintf(out, "_syspgo_commands='%s'\n", commands.c_str());
  // One `case` per question, one branch per command.
  const std::pair<const char*, std::string OptionTable::*> lists[] = {{"_syspgo_options", &OptionTable::names},
                                                                       {"_syspgo_valued", &OptionTable::valued}};
  for (const auto& [function, field] : lists) {
    fprintf(out, "%s() {\n  case $1 in\n", function);
    for (const OptionTable& t : tables) fprintf(out, "    %s) echo '%s' ;;\n", t.command.c_str(), (t.*field).c_str());
    fprintf(out, "  esac\n}\n");
  }
  fprintf(out, "_syspgo_choices() {\n  case \"$1 $2\" in\n");
  for (const OptionTable& t : tables)
    for (const auto& [name, values] : t.choices)
      fprintf(out, "    '%s %s') echo '%s' ;;\n", t.command.c_str(), name.c_str(), values.c_str());
  fprintf(out, "  esac\n}\n%s", kBashComplete);
}

}  // namespace

int PrintCompletion(const std::string& shell, FILE* out) {
  if (shell != "bash") return UsageError("--completion takes bash, got '" + shell + "'");
  std::vector<OptionTable> tables;
  for (const Command* c : Commands()) tables.push_back(ReadOptions(*c));
  PrintBash(tables, out);
  return 0;
}

}  // namespace syspgo::cli
