//===- vm.h - a small stack-machine bytecode interpreter (the pgo demo) ---===//
#pragma once
#include <stddef.h>
#include <stdint.h>

// Opcodes: a few run all the time (the arithmetic, the loads and stores,
// the loop's compare and jump), the rest only in rare programs or on error.
enum op {
  OP_HALT, OP_PUSH, OP_LOAD, OP_STORE, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_AND, OP_OR, OP_XOR, OP_SHL,
  OP_SHR, OP_NEG, OP_DUP, OP_DROP, OP_SWAP, OP_JMP, OP_JZ, OP_JLT, OP_CALLN, OP_PRINT, OP_ASSERT, OP_COUNT
};

struct vm;
typedef int64_t (*native_fn)(struct vm* vm, int64_t a, int64_t b);

struct vm {
  int64_t stack[256];
  int sp;
  int64_t vars[16];
  uint64_t steps;
  int failed;
  char error[160];
};

// Runs `code` (n bytes) on `vm`; 0 at OP_HALT, -1 with vm->error set.
int vm_run(struct vm* vm, const uint8_t* code, size_t n);
// Pops two values and pushes `op` of them (the assembler folds constants
// with it too); 0, or -1 with vm->error set.
int vm_binop(struct vm* vm, int op);
// The natives OP_CALLN reaches through its table (natives.c).
extern const native_fn vm_natives[8];
// Programs (programs.c): each writes its bytecode to `out` and returns its length.
size_t program_build(const char* name, long n, uint8_t* out, size_t cap);
