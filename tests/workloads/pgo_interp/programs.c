//===- programs.c - the bytecode programs the demo runs -------------------===//
// A tiny assembler and two programs of the same kind weighted differently:
// "train" (the profiled run) and "eval" (the timed one), so the evaluation
// is not the training run. "cold" runs the rarely used opcodes once each.
#include <string.h>

#include "vm.h"

struct asm_buf {
  uint8_t* p;
  size_t n, cap;
};

static void emit(struct asm_buf* a, int byte) {
  if (a->n < a->cap) a->p[a->n] = (uint8_t)byte;
  ++a->n;
}
static void emit16(struct asm_buf* a, int v) { emit(a, v & 255); emit(a, (v >> 8) & 255); }
static void push_i(struct asm_buf* a, int v) { emit(a, OP_PUSH); emit16(a, v); }
static void op1(struct asm_buf* a, int op, int arg) { emit(a, op); emit(a, arg); }
// A jump to `target` (a byte offset already emitted): offsets are from the operand.
static void jump_back(struct asm_buf* a, int op, size_t target) { emit(a, op); emit16(a, (int)target - (int)a->n); }
// A forward jump: returns where its operand goes, for patch().
static size_t jump_fwd(struct asm_buf* a, int op) { emit(a, op); size_t at = a->n; emit16(a, 0); return at; }
static void patch(struct asm_buf* a, size_t at) {
  int off = (int)a->n - (int)at;
  if (at + 1 < a->cap) a->p[at] = (uint8_t)(off & 255), a->p[at + 1] = (uint8_t)((off >> 8) & 255);
}

// vars: 0 i, 1 n, 2 x, 3 acc, 4 odd, 5 k
// for (i = 0; i < n; ++i) { x = mix(x, i); acc = (acc + (x & m1) * w) ^ (x >> s);
//   if ((x & 7) == 0) odd = odd + 1; k = x % 5 + k & 1023 }
static void loop_program(struct asm_buf* a, long n, int m1, int w, int s) {
  push_i(a, 0), op1(a, OP_STORE, 0);
  push_i(a, (int)(n > 32767 ? 32767 : n)), op1(a, OP_STORE, 1);
  push_i(a, 7), op1(a, OP_STORE, 2);
  size_t top = a->n;
  op1(a, OP_LOAD, 2), op1(a, OP_LOAD, 0), op1(a, OP_CALLN, 0), op1(a, OP_STORE, 2);
  op1(a, OP_LOAD, 3), op1(a, OP_LOAD, 2), push_i(a, m1), emit(a, OP_AND), push_i(a, w), emit(a, OP_MUL);
  emit(a, OP_ADD), op1(a, OP_LOAD, 2), push_i(a, s), emit(a, OP_SHR), emit(a, OP_XOR);
  push_i(a, 0x7fff), emit(a, OP_AND), op1(a, OP_STORE, 3);
  op1(a, OP_LOAD, 2), push_i(a, 7), emit(a, OP_AND);
  size_t skip = jump_fwd(a, OP_JZ);
  op1(a, OP_LOAD, 5), op1(a, OP_LOAD, 2), push_i(a, 5), emit(a, OP_MOD), emit(a, OP_ADD);
  push_i(a, 1023), emit(a, OP_AND), op1(a, OP_STORE, 5);
  size_t join = jump_fwd(a, OP_JMP);
  patch(a, skip);
  op1(a, OP_LOAD, 4), push_i(a, 1), emit(a, OP_ADD), op1(a, OP_STORE, 4);
  patch(a, join);
  op1(a, OP_LOAD, 0), push_i(a, 1), emit(a, OP_ADD), emit(a, OP_DUP), op1(a, OP_STORE, 0);
  op1(a, OP_LOAD, 1), jump_back(a, OP_JLT, top);
}

// A constant the assembler folds: `x op y` computed by the VM's own routine.
static int fold(int op, int x, int y) {
  struct vm vm;
  memset(&vm, 0, sizeof vm);
  vm.stack[0] = x, vm.stack[1] = y, vm.sp = 2;
  return vm_binop(&vm, op) ? 0 : (int)vm.stack[0];
}

static void cold_program(struct asm_buf* a) {
  push_i(a, fold(OP_DIV, 84, 2)), push_i(a, 5), emit(a, OP_SHL), push_i(a, 3), emit(a, OP_OR);
  emit(a, OP_NEG), push_i(a, 9), emit(a, OP_SWAP), emit(a, OP_SUB), push_i(a, 0), op1(a, OP_CALLN, 5), push_i(a, 0);
  op1(a, OP_CALLN, 1), push_i(a, 48), op1(a, OP_CALLN, 3), emit(a, OP_DUP), emit(a, OP_ASSERT), op1(a, OP_STORE, 3);
}

size_t program_build(const char* name, long n, uint8_t* out, size_t cap) {
  struct asm_buf a = {out, 0, cap};
  if (!strcmp(name, "train")) loop_program(&a, n, 255, 3, 3);
  else if (!strcmp(name, "eval")) loop_program(&a, n, 1023, 5, 7);
  else cold_program(&a);
  emit(&a, OP_HALT);
  return a.n;
}
