/* mix: the fixed instruction mix that measures the time dilation D (../dilation.py). The same
 * object file runs natively (a 32-bit Linux program, native_start.S) and as a multiboot guest
 * under TCG (guest_start.S), so both time the very same instructions; D = guest ticks / native
 * ticks (Gupta et al., "To Infinity and Beyond: Time-Warped Network Emulation", NSDI'06: the
 * time dilation factor). Both read the TSC: under TCG without icount the guest's RDTSC is the
 * host's TSC plus an offset (QEMU 7.2 cpu_get_ticks), so the two counts share a unit.
 *
 * What the mix does is what a network stack's request path does most: copy a frame, sum it
 * (the internet checksum), hash a key, look it up and update a table, branch on data and call
 * through a pointer. TCG's slowdown depends on the mix (memory accesses through its soft TLB
 * cost most), so D is an estimate for such code, not for every instruction.
 *
 * It reports one line, "calib rounds=R reps=K min_ticks=T check=C", the fastest of K timed
 * repetitions after one untimed (TCG translates on the first), through calib_put(). */
#include <stdint.h>

#define ROUNDS 2000
#define REPS 7
#define FRAME 1514

void calib_put(const char *s, uint32_t n);   /* the front end's output: stdout or COM1 */

static uint8_t frame[FRAME], copy[FRAME];
static uint32_t table[1024];
struct node { struct node *next; uint32_t key, value; };
static struct node nodes[256];                               /* a chained bucket list */

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
    return (uint64_t)hi << 32 | lo;
}

__attribute__((noinline)) static uint32_t checksum(const uint8_t *p, uint32_t n)
{
    uint32_t sum = 0;
    for (uint32_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)p[i] << 8 | p[i + 1];
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return ~sum & 0xffff;
}

__attribute__((noinline)) static uint32_t fnv1a(const uint8_t *p, uint32_t n)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

static uint32_t op_add(uint32_t a, uint32_t b) { return a + b; }
static uint32_t op_xor(uint32_t a, uint32_t b) { return a ^ (b << 3); }
static uint32_t op_rot(uint32_t a, uint32_t b) { return a << 7 | a >> 25 | (b & 1); }
static uint32_t (*const ops[3])(uint32_t, uint32_t) = { op_add, op_xor, op_rot };

static uint32_t one_round(uint32_t r, uint32_t acc)
{
    for (uint32_t i = 0; i < FRAME; i += 4)                  /* the frame's copy */
        *(uint32_t *)(copy + i) = *(uint32_t *)(frame + i) ^ r;
    acc += checksum(copy, FRAME);
    uint32_t h = fnv1a(copy + (r & 255), 16);                /* a key's hash and its bucket */
    uint32_t *slot = &table[h & 1023];
    *slot = *slot + 1 == 0 ? 1 : *slot + 1;
    uint32_t want = h & 255;                                 /* a pointer chase */
    for (struct node *n = &nodes[r & 255]; n; n = n->next)
        if (n->key == want) {
            n->value += acc;
            break;
        }
    for (uint32_t i = 0; i < 64; i++) {                      /* branches and calls on data */
        uint32_t v = copy[i * 7 % FRAME];
        acc = v & 1 ? ops[v % 3](acc, v) : acc - v;
    }
    return acc ^ *slot ^ nodes[want].value;
}

static uint32_t mix(void)
{
    uint32_t acc = 0;
    for (uint32_t i = 0; i < 1024; i++)
        table[i] = 0;
    for (uint32_t i = 0; i < 256; i++)                       /* chains of up to 16 nodes */
        nodes[i] = (struct node){ (i & 15) ? &nodes[i - 1] : 0, (i * 97) & 255, 0 };
    for (uint32_t r = 0; r < ROUNDS; r++)
        acc = one_round(r, acc);
    return acc;
}

static char *put_uint(char *at, const char *label, uint64_t v)
{
    char digits[24];
    int n = 0;
    while (*label)
        *at++ = *label++;
    do
        digits[n++] = (char)('0' + v % 10);
    while (v /= 10);
    while (n)
        *at++ = digits[--n];
    return at;
}

void calib_main(void)
{
    for (uint32_t i = 0; i < FRAME; i++)
        frame[i] = (uint8_t)(i * 31 + 7);
    uint32_t check = mix();                                  /* untimed: TCG translates */
    uint64_t best = ~0ull;
    for (int k = 0; k < REPS; k++) {
        uint64_t t0 = rdtsc();
        uint32_t c = mix();
        uint64_t t = rdtsc() - t0;
        if (c != check)
            check = 0;                                       /* not deterministic: said so */
        if (t < best)
            best = t;
    }
    char line[128], *at = line;
    at = put_uint(at, "calib rounds=", ROUNDS);
    at = put_uint(at, " reps=", REPS);
    at = put_uint(at, " min_ticks=", best);
    at = put_uint(at, " check=", check);
    *at++ = '\n';
    calib_put(line, (uint32_t)(at - line));
}
