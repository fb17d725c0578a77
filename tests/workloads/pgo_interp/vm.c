//===- vm.c - the interpreter loop, its checked arithmetic and natives ----===//
// Written the way interpreters often are: one dispatch loop, a helper per
// kind of work (checked stack access, one arithmetic routine for every
// binary operator, natives behind a table) and careful error paths. Without
// a profile the compiler treats every path alike: the helpers are too large
// to inline, the rare opcodes sit between the common ones. A profile says
// which few paths run, which is what profile-guided optimization is for.
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vm.h"

static int vm_fail(struct vm* vm, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(vm->error, sizeof vm->error, fmt, ap);
  va_end(ap);
  vm->failed = 1;
  return -1;
}

static int push(struct vm* vm, int64_t v) {
  if (vm->sp >= (int)(sizeof vm->stack / sizeof vm->stack[0]))
    return vm_fail(vm, "stack overflow at depth %d after %llu steps (value %lld)", vm->sp,
                   (unsigned long long)vm->steps, (long long)v);
  vm->stack[vm->sp++] = v;
  return 0;
}

static int pop(struct vm* vm, int64_t* v) {
  if (vm->sp <= 0) return vm_fail(vm, "stack underflow after %llu steps", (unsigned long long)vm->steps);
  *v = vm->stack[--vm->sp];
  return 0;
}

// Why a binary operator failed, for the message.
enum binop_error { E_OVERFLOW, E_ZERO, E_SHIFT, E_NOT_BINARY };

static int binop_fail(struct vm* vm, int op, int64_t a, int64_t b, enum binop_error e) {
  static const char* const what[] = {"overflow", "division by zero", "shift out of range", "not a binary operator"};
  return vm_fail(vm, "%s: opcode %d on %lld and %lld after %llu steps", what[e], op, (long long)a, (long long)b,
                 (unsigned long long)vm->steps);
}

// Every binary operator, with the checks a careful interpreter makes:
// overflow, division by zero, shift ranges. The common operators need none
// of the error paths, but without a profile they cost the same as the rest,
// and the whole routine is too large to inline into the loop.
int vm_binop(struct vm* vm, int op) {
  int64_t a, b, r = 0;
  enum binop_error e = E_OVERFLOW;
  if (pop(vm, &b) || pop(vm, &a)) return -1;
  switch (op) {
    case OP_ADD: if (__builtin_add_overflow(a, b, &r)) goto fail; break;
    case OP_SUB: if (__builtin_sub_overflow(a, b, &r)) goto fail; break;
    case OP_MUL: if (__builtin_mul_overflow(a, b, &r)) goto fail; break;
    case OP_DIV:
    case OP_MOD:
      if (b == 0) { e = E_ZERO; goto fail; }
      if (a == INT64_MIN && b == -1) goto fail;
      r = op == OP_DIV ? a / b : a % b;
      break;
    case OP_AND: r = a & b; break;
    case OP_OR: r = a | b; break;
    case OP_XOR: r = a ^ b; break;
    case OP_SHL:
    case OP_SHR:
      if (b < 0 || b > 63) { e = E_SHIFT; goto fail; }
      r = op == OP_SHL ? (int64_t)((uint64_t)a << b) : a >> b;
      break;
    default: e = E_NOT_BINARY; goto fail;
  }
  return push(vm, r);
fail:
  return binop_fail(vm, op, a, b, e);
}

// Natives: a hash step that runs all the time, and others that rarely do.
static int64_t nat_mix(struct vm* vm, int64_t a, int64_t b) {
  (void)vm;
  uint64_t x = (uint64_t)a * 0x9e3779b97f4a7c15ull ^ (uint64_t)b;
  return (int64_t)((x ^ (x >> 29)) & 0xffffffff);
}
static int64_t nat_min(struct vm* vm, int64_t a, int64_t b) { (void)vm; return a < b ? a : b; }
static int64_t nat_max(struct vm* vm, int64_t a, int64_t b) { (void)vm; return a > b ? a : b; }
static int64_t nat_gcd(struct vm* vm, int64_t a, int64_t b) {
  (void)vm;
  while (b) { int64_t t = a % b; a = b; b = t; }
  return a;
}
static int64_t nat_clock(struct vm* vm, int64_t a, int64_t b) { (void)a; (void)b; return (int64_t)vm->steps; }
static int64_t nat_abs(struct vm* vm, int64_t a, int64_t b) { (void)vm; (void)b; return a < 0 ? -a : a; }
static int64_t nat_popc(struct vm* vm, int64_t a, int64_t b) { (void)vm; (void)b; return __builtin_popcountll((uint64_t)a); }
static int64_t nat_sel(struct vm* vm, int64_t a, int64_t b) { (void)vm; return a & 1 ? a : b; }

const native_fn vm_natives[8] = {nat_mix, nat_min, nat_max, nat_gcd, nat_clock, nat_abs, nat_popc, nat_sel};

static int16_t imm16(const uint8_t* p) { return (int16_t)(p[0] | p[1] << 8); }

int vm_run(struct vm* vm, const uint8_t* code, size_t n) {
  size_t pc = 0;
  int64_t a, b;
  while (pc < n) {
    uint8_t op = code[pc++];
    ++vm->steps;
    switch (op) {
      case OP_HALT: return 0;
      case OP_PUSH: if (push(vm, imm16(code + pc))) return -1; pc += 2; break;
      case OP_LOAD: if (push(vm, vm->vars[code[pc++] & 15])) return -1; break;
      case OP_STORE: if (pop(vm, &a)) return -1; vm->vars[code[pc++] & 15] = a; break;
      case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_MOD:
      case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR:
        if (vm_binop(vm, op)) return -1;
        break;
      case OP_NEG: if (pop(vm, &a) || push(vm, -a)) return -1; break;
      case OP_DUP: if (pop(vm, &a) || push(vm, a) || push(vm, a)) return -1; break;
      case OP_DROP: if (pop(vm, &a)) return -1; break;
      case OP_SWAP: if (pop(vm, &b) || pop(vm, &a) || push(vm, b) || push(vm, a)) return -1; break;
      case OP_JMP: pc += imm16(code + pc); break;
      case OP_JZ:
        if (pop(vm, &a)) return -1;
        pc = a == 0 ? pc + imm16(code + pc) : pc + 2;
        break;
      case OP_JLT:
        if (pop(vm, &b) || pop(vm, &a)) return -1;
        pc = a < b ? pc + imm16(code + pc) : pc + 2;
        break;
      case OP_CALLN:
        if (pop(vm, &b) || pop(vm, &a)) return -1;
        if (push(vm, vm_natives[code[pc++] & 7](vm, a, b))) return -1;
        break;
      case OP_PRINT:
        if (pop(vm, &a)) return -1;
        printf("%lld\n", (long long)a);
        break;
      case OP_ASSERT:
        if (pop(vm, &a)) return -1;
        if (!a) return vm_fail(vm, "assertion failed at byte %zu after %llu steps", pc - 1, (unsigned long long)vm->steps);
        break;
      default:
        return vm_fail(vm, "bad opcode %u at byte %zu", op, pc - 1);
    }
  }
  return vm_fail(vm, "ran off the end of the program (%zu bytes) without OP_HALT", n);
}
