// floor_syscalls.c - runs a command with bench/floor_syscalls.bpf.c attached.
// usage: floor_syscalls OBJECT -- COMMAND [ARG...]; exits with the command's status.
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_child.h"

int main(int argc, char** argv) {
  if (argc < 4 || strcmp(argv[2], "--") != 0) {
    fprintf(stderr, "usage: floor_syscalls OBJECT -- COMMAND [ARG...]\n");
    return 2;
  }
  struct bpf_object* obj = bpf_object__open_file(argv[1], NULL);
  if (!obj || bpf_object__load(obj)) {
    fprintf(stderr, "floor_syscalls: cannot load %s\n", argv[1]);
    return 1;
  }
  struct bpf_program* p;
  bpf_object__for_each_program(p, obj) {
    if (!bpf_program__attach(p)) {
      fprintf(stderr, "floor_syscalls: cannot attach %s\n", bpf_program__name(p));
      return 1;
    }
  }
  int st = run_child(argv + 3, "floor_syscalls", NULL);
  bpf_object__close(obj);
  return shell_status(st);
}
