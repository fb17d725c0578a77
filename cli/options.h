//===- options.h - option tables for the syspgo commands, on CLI11 --------===//
// Every command declares each of its options once, in a CLI::App: its
// names, the name of its value, its help, its default (the bound
// variable's initial value, shown through capture_default_str) and the
// values it accepts (a validator below). The help text, the defaults and
// limits it shows and the messages for bad values all come from that one
// declaration. This file holds what every command repeats: the house help
// layout (options grouped by purpose, then examples), validators whose
// failures name what is accepted, the -v/-vv/-vvv flag, the command that
// follows collect's and prefetch's options, and the one place CLI11's
// exceptions become syspgo usage errors (exit status 2).
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace syspgo::data {
struct TaskFilter;
}  // namespace syspgo::data

namespace syspgo::cli {

// A CLI::App for `name` ("syspgo analyze"). Its help prints `about` (the
// usage lines and what the command does), the options in the order of
// their groups' first declaration (set ->group(), or option_defaults()
// ->group() before a run of them), each with its default and limits, then
// `footer` (examples, notes). An option given twice takes the last value.
std::unique_ptr<CLI::App> NewApp(const std::string& name, std::string about, std::string footer);

// How a command takes a program to run after its own options.
enum class Tail {
  kNone,         // none: an argument left over is a usage error
  kAfterDashes,  // after `--` only: PLAN [OPTIONS] -- CMD ARGS... (prefetch)
  kFirstWord,    // after `--`, or from the first argument that is no option (collect)
};

// Parses `args` (those after the command's name) into the options of
// `app`, and with a Tail the program to run into *command. Returns
// std::nullopt when the command is to go ahead; else the exit status to end
// with: 0 after --help (printed on stdout), 2 after a usage error (printed
// on stderr by UsageError, naming the option, the value and what it takes).
// No CLI11 exception leaves it.
std::optional<int> Parse(CLI::App& app, const std::vector<std::string>& args, Tail tail = Tail::kNone,
                         std::vector<std::string>* command = nullptr);

// For `syspgo --completion`: while set, Parse hands each command's app to
// `inspect` and returns 0 without parsing, so the option tables can be read
// without running the command.
void InspectInsteadOfParsing(std::function<void(const CLI::App&)> inspect);

// Validators. Their description is the accepted range, which the help shows
// after the default; their failure reads, after the option's name, "needs
// WHAT from LO to HI, got 'V'" or "is A, B or C, got 'V'".
//
// A decimal number from lo to hi (e.g. milliseconds, 0.5 allowed).
CLI::Validator Number(double lo, double hi, const std::string& what);
// A whole number from lo to hi, digits only. Give it with ->transform, not
// ->check: it rewrites the value without leading zeros, which CLI11 would
// otherwise read as octal.
CLI::Validator Whole(uint64_t lo, uint64_t hi, const std::string& what);
// One of `choices`.
CLI::Validator OneOf(std::vector<std::string> choices);
// `option` takes one of `choices`, which its help names as its value
// (--detail lean|full).
CLI::Option* Choices(CLI::Option* option, const std::vector<std::string>& choices);
// `option` takes a decimal number of `what` ("milliseconds") from lo to hi
// (Number), which its help names as `value` (MS).
CLI::Option* Decimal(CLI::Option* option, const std::string& value, double lo, double hi, const std::string& what);
// What `ok` takes; `accepted` says what that is ("touched, mapped, cached
// or auto"), for the failure "is ACCEPTED, got 'V'". For values a library
// parses itself, so the choices stay written once, there.
CLI::Validator Accepts(std::function<bool(const std::string&)> ok, const std::string& accepted);
// A comma-separated list of `choices` ("fileio,block"); a name not among
// them reads "names an unknown WHAT 'x'; WHATs are: a, b, c".
CLI::Validator ListOf(std::vector<std::string> choices, const std::string& what);
// Anything but the empty string: "needs WHAT".
CLI::Validator NonEmpty(const std::string& what);

// "a, b or c", for help and messages.
std::string OrList(const std::vector<std::string>& choices);

// The -v flag, counted: -v, -vv (or -v -v), -vvv each say more. `names`
// may add a long form ("-v,--verbose").
CLI::Option* AddVerbosity(CLI::App& app, int* level, const std::string& help, const std::string& names = "-v");

// An option that may be given more than once, one value each time
// (--debug-dir A --debug-dir B), collected into the vector it is bound to.
CLI::Option* Repeatable(CLI::Option* option);

// --cgroup, --comm, --container (and --pid unless the command has its
// own): read the run for those processes alone (analyze/data/task_filter.h).
void AddTaskFilter(CLI::App& app, data::TaskFilter* filter, bool with_pid = true);

// --json FILE: the command's summary for machines (syspgo pgo reads them),
// beside its lines for people, which may change; '-' for stdout. `help`
// says what the summary holds.
CLI::Option* AddJsonSummary(CLI::App& app, std::string* path, const std::string& help);
// Writes `summary` where --json said ("": nowhere), to a file through
// WriteFileAtomically; a warning, not a failure, if it cannot.
void WriteJsonSummary(const std::string& path, const nlohmann::ordered_json& summary);

}  // namespace syspgo::cli
