//===- process_test.cc - common/process: RunProcess, ChildProcess on real commands ===//
#include "common/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cerrno>
#include <fstream>

#include "tests/test_util.h"

namespace syspgo::test {
namespace {

ProcessSpec ShSpec(const std::string& script) {
  ProcessSpec s;
  s.argv = {"/bin/sh", "-c", script};
  return s;
}

ProcessResult MustRun(const ProcessSpec& s) {
  auto r = RunProcess(s);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : ProcessResult{-1};
}

TEST(Process, ExitStatusIsTheProgramsAndASignalIs128PlusIt) {
  EXPECT_EQ(MustRun(ShSpec("exit 0")).status, 0);
  EXPECT_EQ(MustRun(ShSpec("exit 3")).status, 3);
  // 127 from the program itself is its status, not a failure to start.
  EXPECT_EQ(MustRun(ShSpec("exit 127")).status, 127);
  EXPECT_EQ(MustRun(ShSpec("kill -TERM $$")).status, 128 + SIGTERM);
}

TEST(Process, CapturesStdoutAndStderrApart) {
  auto r = MustRun(ShSpec("echo out; echo err >&2; echo more"));
  EXPECT_EQ(r.out, "out\nmore\n");
  EXPECT_EQ(r.err, "err\n");
}

// Both pipes drained together: a child that fills stderr's pipe while we
// would be waiting on stdout's must not stall.
TEST(Process, CapturesMoreThanAPipeHoldsOnBothStreams) {
  auto r = MustRun(ShSpec("head -c 300000 /dev/zero >&2; head -c 200000 /dev/zero; head -c 100000 /dev/zero >&2"));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.size(), 200000u);
  EXPECT_EQ(r.err.size(), 400000u);
}

TEST(Process, StdinIsEmptyUnlessInherited) {
  auto r = MustRun(ShSpec("cat; echo end"));
  EXPECT_EQ(r.out, "end\n");
}

TEST(Process, LogFileIsAppendedToAndTakesBothStreamsWithErrToOut) {
  TempDir t;
  std::string log = t.File("run.log");
  for (const char* script : {"echo one; echo two >&2", "echo three"}) {
    ProcessSpec s = ShSpec(script);
    s.out = ProcessOutput::File(log);
    s.err_to_out = true;
    auto r = MustRun(s);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
  }
  EXPECT_EQ(ReadAll(log), "one\ntwo\nthree\n");
  struct stat st{};
  ASSERT_EQ(stat(log.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(Process, DiscardedOutputIsNeitherCapturedNorOurs) {
  ProcessSpec s = ShSpec("echo gone; echo kept >&2");
  s.out = ProcessOutput::Discard();
  auto r = MustRun(s);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "kept\n");
}

TEST(Process, EnvGoesOnTopOfOursAndAnEmptyValueRemovesAKey) {
  setenv("SYSPGO_PROCESS_TEST_KEEP", "kept", 1);
  setenv("SYSPGO_PROCESS_TEST_DROP", "there", 1);
  ProcessSpec s = ShSpec("echo \"$SYSPGO_PROCESS_TEST_KEEP ${SYSPGO_PROCESS_TEST_DROP-unset} $SYSPGO_PROCESS_TEST_NEW\"");
  s.env = {{"SYSPGO_PROCESS_TEST_DROP", ""}, {"SYSPGO_PROCESS_TEST_NEW", "new"}};
  EXPECT_EQ(MustRun(s).out, "kept unset new\n");
  unsetenv("SYSPGO_PROCESS_TEST_KEEP");
  unsetenv("SYSPGO_PROCESS_TEST_DROP");
}

TEST(Process, SecondsAreTheChildsWallTime) {
  auto r = MustRun(ShSpec("sleep 0.2"));
  EXPECT_GE(r.seconds, 0.2);
  EXPECT_LT(r.seconds, 30);
}

TEST(Process, MissingProgramIsAnErrorNamingIt) {
  ProcessSpec s;
  s.argv = {"syspgo-no-such-program", "x"};
  auto r = RunProcess(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ENOENT);
  EXPECT_EQ(r.error().message, "cannot run syspgo-no-such-program: no such program on PATH");

  s.argv = {"/nonexistent/syspgo-tool"};
  r = RunProcess(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ENOENT);
  EXPECT_NE(r.error().message.find("/nonexistent/syspgo-tool"), std::string::npos) << r.error().message;
}

TEST(Process, FileThatIsNotExecutableIsAnError) {
  TempDir t;
  std::string f = t.File("not-exec");
  std::ofstream(f) << "#!/bin/sh\necho hi\n";
  chmod(f.c_str(), 0644);
  ProcessSpec s;
  s.argv = {f};
  auto r = RunProcess(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, EACCES);
  EXPECT_NE(r.error().message.find(f), std::string::npos) << r.error().message;
}

TEST(Process, EmptyCommandLineIsAnError) {
  EXPECT_FALSE(RunProcess(ProcessSpec{}).ok());
}

TEST(Process, LogThatCannotBeOpenedIsAnErrorNamingIt) {
  ProcessSpec s = ShSpec("echo x");
  s.out = ProcessOutput::File("/nonexistent/dir/run.log");
  auto r = RunProcess(s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("/nonexistent/dir/run.log"), std::string::npos) << r.error().message;
}

TEST(Process, BeforeExecRunsInTheChildAndItsErrnoStopsTheExec) {
  TempDir t;
  std::string mark = t.File("ran");
  ProcessSpec s = ShSpec("touch " + mark);
  s.before_exec = [] { return EPERM; };
  auto r = RunProcess(s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, EPERM);
  EXPECT_NE(access(mark.c_str(), F_OK), 0) << "the program ran after before_exec failed";

  // It runs in the child: what it changes is the program's, not ours.
  TempDir cwd;
  ASSERT_EQ(chdir(cwd.path().c_str()), 0);
  s = ShSpec("pwd");
  s.before_exec = [] { return chdir("/") == 0 ? 0 : errno; };
  EXPECT_EQ(MustRun(s).out, "/\n");
  EXPECT_EQ(MustRun(ShSpec("pwd")).out, cwd.path() + "\n");
  ASSERT_EQ(chdir("/"), 0);
}

// Held: nothing of the program runs before Release(); after it, the
// program runs with what the spec says, and is reaped with its status.
TEST(Process, HeldChildRunsOnlyOnceReleased) {
  TempDir t;
  std::string mark = t.File("ran");
  ProcessSpec s = ShSpec("touch " + mark + "; exit 7");
  s.out = s.err = ProcessOutput::Inherit();
  auto c = ChildProcess::SpawnHeld(s);
  ASSERT_TRUE(c.ok()) << c.error().message;
  int status = -1;
  usleep(200 * 1000);  // time it would have had to run: any wait shows a child that did not hold
  EXPECT_FALSE((*c)->Reap(&status)) << "the held child ended before its release";
  EXPECT_NE(access(mark.c_str(), F_OK), 0) << "the program ran before its release";
  ASSERT_TRUE((*c)->Release().ok());
  ASSERT_TRUE((*c)->Reap(&status, true));
  EXPECT_EQ(status, 7);
  EXPECT_FALSE((*c)->Signaled());
  EXPECT_EQ(access(mark.c_str(), F_OK), 0);
}

TEST(Process, HeldChildWhoseExecFailsIsAnErrorAtRelease) {
  ProcessSpec s;
  s.argv = {"syspgo-tool"};
  s.out = s.err = ProcessOutput::Discard();
  s.path = "/nonexistent/syspgo-tool";  // found by the caller: exec'd as is, not looked up on PATH
  auto c = ChildProcess::SpawnHeld(s);
  ASSERT_TRUE(c.ok()) << c.error().message;
  Status st = (*c)->Release();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ENOENT);
  EXPECT_EQ(st.error().message, "cannot run /nonexistent/syspgo-tool: No such file or directory");
  int status = -1;
  ASSERT_TRUE((*c)->Reap(&status, true));
  EXPECT_EQ(status, 127);
}

// A parent gone before the release (here: the object, and with it the
// release pipe) leaves a child that ends without running the program.
TEST(Process, HeldChildNeverReleasedEndsWithoutRunningTheProgram) {
  TempDir t;
  std::string mark = t.File("ran");
  ProcessSpec s = ShSpec("touch " + mark);
  s.out = s.err = ProcessOutput::Discard();
  auto c = ChildProcess::SpawnHeld(s);
  ASSERT_TRUE(c.ok()) << c.error().message;
  pid_t pid = (*c)->pid();
  c->reset();
  int ws = 0;
  ASSERT_EQ(waitpid(pid, &ws, 0), pid);
  ASSERT_TRUE(WIFEXITED(ws));
  EXPECT_EQ(WEXITSTATUS(ws), 125);
  EXPECT_NE(access(mark.c_str(), F_OK), 0) << "the program ran without a release";
}

TEST(Process, HeldChildKilledBySignalIsReapedAsSignaled) {
  ProcessSpec s = ShSpec("kill -SEGV $$");
  s.out = s.err = ProcessOutput::Discard();
  EXPECT_FALSE(ChildProcess::SpawnHeld(ShSpec("true")).ok()) << "a held child's output cannot be captured";
  auto c = ChildProcess::SpawnHeld(s);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_TRUE((*c)->Release().ok());
  int status = -1;
  ASSERT_TRUE((*c)->Reap(&status, true));
  EXPECT_EQ(status, 128 + SIGSEGV);
  EXPECT_TRUE((*c)->Signaled());
}

void OurHandler(int) {}

// As system(3): a Ctrl-C at the terminal reaches the child, which decides;
// we wait on. The child has the dispositions we were started with: the
// default, or ignored where whoever started us ignored them.
TEST(Process, IgnoringInterruptsLeavesThemToTheChildAsSystemDoes) {
  struct sigaction ours {}, before {}, after {};
  ours.sa_handler = OurHandler;
  ASSERT_EQ(sigaction(SIGINT, &ours, &before), 0);
  ProcessSpec s = ShSpec("kill -INT $PPID; kill -QUIT $PPID; kill -INT $$; exit 4");
  s.ignore_interrupts = true;
  EXPECT_EQ(MustRun(s).status, 128 + SIGINT) << "the child has the default disposition, not our handler or SIG_IGN";
  ASSERT_EQ(sigaction(SIGINT, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, OurHandler) << "our disposition is back";

  signal(SIGINT, SIG_IGN);
  EXPECT_EQ(MustRun(s).status, 4) << "started with SIGINT ignored, the child ignores it too";
  ASSERT_EQ(sigaction(SIGINT, &before, nullptr), 0);
}

}  // namespace
}  // namespace syspgo::test
