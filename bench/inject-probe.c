/*
 * inject-probe: the image rmb-inject's exec sweep runs.
 *
 * /proc/thread-self/fail-nth outlives an exec, so whatever the new image
 * does before it reads the counter can take the n-th allocation.  With
 * glibc that was the start-up itself: the loader's mprotect after
 * relocation failing (exit 127), or main's frame reaching below the
 * stack vma, whose failed expansion is a SIGSEGV with a "segfault at"
 * line.  This image has no C library: it runs on the stack exec built
 * and reads the counter first.  A page fault of its own may still take
 * the injection; the kernel retries such a fault, and the counter then
 * reads 0.
 *
 * Exit: PROBE_CAME if the n-th allocation came (the counter reads 0, or
 * its open failed, which only an injection does here); PROBE_NOT_REACHED
 * if not, after disarming the counter.
 */
#include <fcntl.h>

#include "lib/inject-probe.h"

#if defined(__x86_64__)
enum { NR_READ = 0, NR_WRITE = 1, NR_OPEN = 2, NR_EXIT_GROUP = 231 };

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile ("syscall" : "=a" (ret)
			  : "a" (nr), "D" (a), "S" (b), "d" (c)
			  : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__i386__)
enum { NR_READ = 3, NR_WRITE = 4, NR_OPEN = 5, NR_EXIT_GROUP = 252 };

static long sys3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile ("int $0x80" : "=a" (ret)
			  : "a" (nr), "b" (a), "c" (b), "d" (c)
			  : "memory");
	return ret;
}
#else
#error "inject-probe: no system call stub for this arch"
#endif

static int probe(void)
{
	static const char path[] = "/proc/thread-self/fail-nth";
	char text[16];
	long fd = sys3(NR_OPEN, (long)path, O_RDWR, 0), n;

	if (fd < 0)
		return PROBE_CAME;
	n = sys3(NR_READ, fd, (long)text, sizeof(text));
	if (n > 0 && text[0] == '0' && (n == 1 || text[1] == '\n'))
		return PROBE_CAME;
	sys3(NR_WRITE, fd, (long)"0", 1);
	return PROBE_NOT_REACHED;
}

void _start(void)
{
	sys3(NR_EXIT_GROUP, probe(), 0, 0);
	for (;;)
		;
}
