/*
 * rmb-fastpath: the paths every process takes, with no memory pressure:
 * the 2004 comparison's setting (kernbench, SDET), where both schemes
 * were within a percent of each other.
 *
 * mode=fault  will-it-scale's page_fault1: each of T tasks maps an R_mb
 *             anonymous region, writes a word to every page (a fault that
 *             allocates a page and adds its rmap), checks what it wrote
 *             and unmaps it, L times.  Faults per second, all tasks.
 * mode=brk    will-it-scale's brk2: each task grows its heap by a page
 *             with brk(), writes it, and shrinks it back, L times (vma
 *             expand and shrink, the page's rmap added and removed).
 *             Operations per second, all tasks.
 * mode=sdet   an SDET-like mix: each of T users runs L busybox shell
 *             scripts (fork, exec, small files in tmpfs, pipes, a
 *             directory made and removed).  Scripts per hour, all users.
 *
 * The T tasks are forked first (exec=1: and exec this program again,
 * which then runs one task) and start together on a pipe; elapsed is from
 * their start to the last one's exit.  Why exec matters: 6.1's anon_vma
 * will not expand a vma whose anon_vma chain came from fork, so a
 * forked task's brk makes a new vma each time; a fresh mm expands and
 * splits the heap vma, as anonmm does in both cases.
 */
#define _GNU_SOURCE
#include "lib/rmb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static struct rmb_param params[] = {
	{ .key = "mode", .choices = "fault|brk|sdet", .sdef = "fault",
	  .help = "fault: page_fault1; brk: brk2; sdet: shell-script users" },
	{ .key = "T", .def = 1, .min = 1, .max = 64,
	  .help = "tasks (users) running at once" },
	{ .key = "L", .def = 16, .min = 1, .max = 10000000,
	  .help = "loops of each task: regions (fault), grow-shrink pairs "
		  "(brk), scripts (sdet)" },
	{ .key = "R_mb", .modes = "fault", .def = 16, .min = 1, .max = 1024,
	  .help = "region each fault loop maps, MB" },
	{ .key = "exec", .def = 0, .min = 0, .max = 1,
	  .help = "1: each task execs this program again before its loops "
		  "(a fresh mm, as a shell's commands have); 0: a forked "
		  "copy of the parent (its heap vma and its rmap inherited)" },
	{ .key = "seed", .def = 1, .min = 0, .max = 2147483647,
	  .help = "seed of the page patterns" },
	{ .key = NULL },
};

/*
 * One busybox shell script of an SDET user: edit, list, pipe, copy and
 * clean up in a directory of its own (tmpfs).  Its exit status is 0 only
 * if every step gave what it should.
 */
static const char sdet_script[] =
	"d=/tmp/sdet.$$; mkdir $d && cd $d || exit 1; "
	"i=0; while [ $i -lt 8 ]; do echo line $i >> f; i=$((i + 1)); done; "
	"[ \"$(cat f | grep line | wc -l)\" -eq 8 ] || exit 2; "
	"sed s/line/row/ f | sort -r > g; cp g h; mkdir sub; mv h sub/; "
	"ls -l sub > /dev/null; [ \"$(head -n 1 sub/h)\" = \"row 7\" ] || "
	"exit 3; cd / && rm -r $d";

/*
 * A task's exit status: the pages it found holding the wrong data (at
 * most TASK_BAD_MAX), or TASK_SYSCALL if a call it needed failed.
 */
#define TASK_BAD_MAX	100
#define TASK_SYSCALL	101

static int fault_task(size_t bytes, uint64_t seed, long loops)
{
	size_t npages = bytes / rmb_page, step = rmb_page / sizeof(long), i;
	size_t bad = 0;
	long l;

	for (l = 0; l < loops; l++) {
		unsigned long *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		unsigned long v = (unsigned long)(seed + (uint64_t)l);

		if (p == MAP_FAILED)
			return TASK_SYSCALL;
		for (i = 0; i < npages; i++)
			p[i * step] = v + i;
		for (i = 0; i < npages; i++)
			bad += p[i * step] != v + i;
		if (munmap(p, bytes))
			return TASK_SYSCALL;
	}
	return bad > TASK_BAD_MAX ? TASK_BAD_MAX : (int)bad;
}

static int brk_task(uint64_t seed, long loops)
{
	char *base = sbrk(0);
	int bad = 0;
	long l;

	if (base == (void *)-1)
		return TASK_SYSCALL;
	for (l = 0; l < loops; l++) {
		char v = (char)(seed + (uint64_t)l);

		if (brk(base + rmb_page))
			return TASK_SYSCALL;
		base[rmb_page - 1] = v;
		bad += base[rmb_page - 1] != v;
		if (brk(base))
			return TASK_SYSCALL;
	}
	return bad > TASK_BAD_MAX ? TASK_BAD_MAX : bad;
}

/* A script's exit status 2 or 3: a file read back held the wrong data. */
static int sdet_task(long loops)
{
	int bad = 0, st;
	long l;

	for (l = 0; l < loops; l++) {
		pid_t pid = rmb_fork();

		if (pid < 0)
			return TASK_SYSCALL;
		if (pid == 0) {
			execl("/bin/sh", "sh", "-c", sdet_script, (char *)NULL);
			_exit(127);
		}
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				return TASK_SYSCALL;
		if (WIFEXITED(st) && (WEXITSTATUS(st) == 2 ||
				      WEXITSTATUS(st) == 3))
			bad++;
		else if (!WIFEXITED(st) || WEXITSTATUS(st))
			return TASK_SYSCALL;
	}
	return bad > TASK_BAD_MAX ? TASK_BAD_MAX : bad;
}

/* Pages a task verifies in a loop: each page of the region (fault), the
 * heap's new page (brk), the two files a script reads back (sdet). */
static long long pages_per_loop(void)
{
	if (rmb_mode_is("fault"))
		return (long long)(((size_t)rmb_arg("R_mb") << 20) / rmb_page);
	return rmb_mode_is("brk") ? 1 : 2;
}

static int task(long loops)
{
	uint64_t seed = (uint64_t)rmb_arg("seed");

	if (rmb_mode_is("fault"))
		return fault_task((size_t)rmb_arg("R_mb") << 20, seed, loops);
	if (rmb_mode_is("brk"))
		return brk_task(seed, loops);
	return sdet_task(loops);
}

struct outcome {
	uint64_t ns;		/* from the start to the last task's exit */
	long long pswpout;	/* pages swapped out meanwhile (-1: unknown) */
	int failed;		/* tasks that died or whose calls failed */
	long long bad;		/* pages found holding the wrong data */
};

/* The environment variable that makes an exec'd copy a task: "GO,READY",
 * the fds of the start pipe it waits on and the pipe it says ready on. */
#define TASK_ENV "RMB_FASTPATH_TASK_FDS"

static char **self_argv;

/* A task, forked or exec'd: say ready, wait for the start, run. */
static int task_start(int go_fd, int ready_fd, long loops)
{
	char c = 'r';

	if (write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) < 0)
		return TASK_SYSCALL;
	close(ready_fd);
	return task(loops);
}

static void task_child(int go_fd, int ready_fd, long loops)
{
	char fds[32];

	if (rmb_arg("exec")) {
		snprintf(fds, sizeof(fds), "%d,%d", go_fd, ready_fd);
		setenv(TASK_ENV, fds, 1);
		execv("/proc/self/exe", self_argv);
		_exit(TASK_SYSCALL);
	}
	_exit(task_start(go_fd, ready_fd, loops));
}

/* Wait until n tasks said they are ready (exec'd copies included). */
static void wait_ready(int fd, int n)
{
	char c;

	while (n > 0) {
		ssize_t got = read(fd, &c, 1);

		if (got == 1)
			n--;
		else if (got == 0 || errno != EINTR)
			break;	/* a task died first: the waits count it */
	}
}

/* Fork T tasks held on a pipe, release them together, wait for all. */
static void run_tasks(int t, long loops, struct outcome *o)
{
	int go[2], ready[2], i, st;
	uint64_t start;

	if (pipe(go) || pipe(ready))
		rmb_die(RMB_EXIT_FAIL, "pipe: %s", strerror(errno));
	for (i = 0; i < t; i++) {
		pid_t pid = rmb_fork();

		if (pid < 0)
			rmb_die(RMB_EXIT_FAIL, "fork of task %d of %d: %s",
				i + 1, t, strerror(errno));
		if (pid == 0) {
			close(go[1]);
			close(ready[0]);
			task_child(go[0], ready[1], loops);
		}
	}
	close(go[0]);
	close(ready[1]);
	wait_ready(ready[0], t);
	close(ready[0]);
	o->pswpout = rmb_vmstat("pswpout");
	start = rmb_now_ns();
	close(go[1]);			/* every task reads EOF: go */
	for (i = 0; i < t; i++) {
		while (wait(&st) < 0)
			if (errno != EINTR)
				rmb_die(RMB_EXIT_FAIL, "wait: %s",
					strerror(errno));
		if (WIFEXITED(st) && WEXITSTATUS(st) <= TASK_BAD_MAX) {
			o->bad += WEXITSTATUS(st);
			continue;
		}
		if (WIFEXITED(st))
			rmb_error("a task's system call failed (status %d)",
				  WEXITSTATUS(st));
		else
			rmb_error("a task was killed by signal %d",
				  WTERMSIG(st));
		o->failed++;
	}
	o->ns = rmb_now_ns() - start;
	if (o->pswpout >= 0 && rmb_vmstat("pswpout") >= 0)
		o->pswpout = rmb_vmstat("pswpout") - o->pswpout;
}

static void report(int t, long loops, const struct outcome *o)
{
	double ops = (double)t * (double)loops, per_s;
	struct rmb_json j;

	if (rmb_mode_is("fault"))
		ops *= (double)pages_per_loop();
	per_s = o->ns ? ops * 1e9 / (double)o->ns : 0;
	rmb_result_begin(&j, "summary");
	rmb_json_int(&j, "tasks_count", t);
	rmb_json_int(&j, "elapsed_ns", (long long)o->ns);
	rmb_json_int(&j, "tasks_failed_count", o->failed);
	if (o->pswpout >= 0)
		rmb_json_int(&j, "pswpout_pages", o->pswpout);
	if (rmb_mode_is("fault"))
		rmb_json_dbl(&j, "faults_per_s", per_s);
	else if (rmb_mode_is("brk"))
		rmb_json_dbl(&j, "brk_ops_per_s", per_s);
	else
		rmb_json_dbl(&j, "scripts_per_s", per_s);
	rmb_json_int(&j, "verified_pages",
		     (long long)(t - o->failed) * loops * pages_per_loop());
	rmb_json_int(&j, "verify_mismatch_pages", o->bad);
	rmb_json_end(&j);
}

int main(int argc, char **argv)
{
	struct outcome o = { 0 };
	long loops;
	int t;

	rmb_init("fastpath");
	rmb_parse_args(params, argc, argv);
	self_argv = argv;
	t = (int)rmb_arg("T");
	loops = (long)rmb_arg("L");
	if (getenv(TASK_ENV)) {		/* an exec'd task (exec=1) */
		int go_fd, ready_fd;

		if (sscanf(getenv(TASK_ENV), "%d,%d", &go_fd, &ready_fd) != 2)
			return TASK_SYSCALL;
		return task_start(go_fd, ready_fd, loops);
	}
	if (rmb_mode_is("fault"))
		rmb_need_mem_kb((long long)t * (rmb_arg("R_mb") << 10), 0,
				"T regions of R_mb");
	run_tasks(t, loops, &o);
	report(t, loops, &o);
	if (o.failed)
		rmb_error("%d of %d tasks failed", o.failed, t);
	if (rmb_check_mismatch(o.bad, (long long)t * loops * pages_per_loop(),
			       "the tasks"))
		return RMB_EXIT_FAIL;
	return o.failed ? RMB_EXIT_FAIL : 0;
}
