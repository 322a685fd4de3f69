/* An i386 program that sends one UDP datagram to 127.0.0.1:PORT without calling socket():
   the socket comes from io_uring (IORING_OP_SOCKET). Freestanding: no C library is needed
   to build it with gcc -m32. It prints how far it got and exits 0 once the datagram is sent. */

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

static long sys(long n, long a, long b, long c, long d, long e) {
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(n), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
                     : "memory");
    return r;
}

enum { SYS_EXIT = 1, SYS_WRITE = 4, SYS_OLD_MMAP = 90, SYS_CONNECT = 362,
       SYS_IO_URING_SETUP = 425, SYS_IO_URING_ENTER = 426 };

struct sq_offsets { u32 head, tail, ring_mask, ring_entries, flags, dropped, array, resv1; u64 user_addr; };
struct cq_offsets { u32 head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1; u64 user_addr; };
struct uring_params {
    u32 sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle, features, wq_fd, resv[3];
    struct sq_offsets sq;
    struct cq_offsets cq;
};
struct sqe {
    u8 opcode, flags; u16 ioprio; int fd; u64 off; u64 addr; u32 len; u32 op_flags;
    u64 user_data; u16 buf_index, personality; int file_index; u64 addr3; u64 pad;
};
struct cqe { u64 user_data; int res; u32 flags; };
struct mmap_args { u32 addr, len, prot, flags, fd, offset; };
struct inet_address { u16 family; u16 port; u32 address; u8 zero[8]; };

static struct uring_params params;
static struct mmap_args map;
static struct inet_address target;

static void say(const char *text) {
    long n = 0;
    while (text[n]) n++;
    sys(SYS_WRITE, 1, (long)text, n, 0, 0);
}

static void leave(const char *text, long code) {
    say(text);
    sys(SYS_EXIT, code, 0, 0, 0, 0);
    for (;;) {}
}

static u8 *mapped(long ring, u32 length, u32 offset) {
    map.len = length; map.prot = 3; map.flags = 1; map.fd = (u32)ring; map.offset = offset;
    long at = sys(SYS_OLD_MMAP, (long)&map, 0, 0, 0, 0);
    if ((unsigned long)at > (unsigned long)-4096L) leave("mmap refused\n", 4);
    return (u8 *)at;
}

__attribute__((force_align_arg_pointer)) void _start(void) {
    long ring = sys(SYS_IO_URING_SETUP, 4, (long)&params, 0, 0, 0);
    if (ring < 0) leave("io_uring_setup refused\n", 3);
    say("ring\n");
    u8 *sq = mapped(ring, params.sq.array + params.sq_entries * 4, 0);
    struct sqe *sqes = (struct sqe *)mapped(ring, params.sq_entries * sizeof(struct sqe), 0x10000000);
    u8 *cq = mapped(ring, params.cq.cqes + params.cq_entries * sizeof(struct cqe), 0x8000000);
    struct sqe *entry = &sqes[0];
    u8 *raw = (u8 *)entry;
    for (u32 i = 0; i < sizeof(struct sqe); i++) raw[i] = 0;
    entry->opcode = 45;  /* IORING_OP_SOCKET */
    entry->fd = 2;       /* AF_INET */
    entry->off = 2;      /* SOCK_DGRAM */
    volatile u32 *tail = (u32 *)(sq + params.sq.tail);
    u32 mask = *(u32 *)(sq + params.sq.ring_mask);
    ((u32 *)(sq + params.sq.array))[*tail & mask] = 0;
    __sync_synchronize();
    *tail = *tail + 1;
    __sync_synchronize();
    if (sys(SYS_IO_URING_ENTER, ring, 1, 1, 1, 0) < 0) leave("io_uring_enter refused\n", 5);
    volatile u32 *head = (u32 *)(cq + params.cq.head);
    u32 cq_mask = *(u32 *)(cq + params.cq.ring_mask);
    int sock = ((struct cqe *)(cq + params.cq.cqes))[*head & cq_mask].res;
    if (sock < 0) leave("IORING_OP_SOCKET refused\n", 6);
    say("socket\n");
    target.family = 2;
    target.port = (u16)(((PORT & 0xff) << 8) | ((PORT >> 8) & 0xff));
    target.address = 0x0100007f;  /* 127.0.0.1 in network order */
    if (sys(SYS_CONNECT, sock, (long)&target, sizeof target, 0, 0) < 0) leave("connect refused\n", 7);
    if (sys(SYS_WRITE, sock, (long)"janito-compat-udp", 17, 0, 0) != 17) leave("send refused\n", 8);
    leave("sent\n", 0);
}
