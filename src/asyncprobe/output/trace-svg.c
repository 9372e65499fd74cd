/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracing, the SVG timeline writer (trace-svg.c), in the manner of
 * systemd-analyze plot: one row per call in cookie order, the bar split
 * into queued, running, the phases and the waits; a time grid; a legend;
 * marks as vertical lines; a tooltip per bar; the critical path in the
 * header.  Every string is sanitized for XML: invalid UTF-8 bytes and
 * control characters (not allowed in XML at all) become the text \xNN.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
#include "output/output.h"
#include "internal.h"

/*
 * XML character data or attribute value, at most @max characters (an
 * invalid byte counts as one); longer text ends in an ellipsis.
 */
static void put_xml(FILE *f, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t len, n = 0;
	uint32_t cp;

	while (*s) {
		if (n++ == max) {
			fputs("\xe2\x80\xa6", f);
			return;
		}
		len = ap_utf8_decode((const char *)s, &cp);
		if (!len) {
			fprintf(f, "\\x%02x", *s);
			s++;
			continue;
		}
		switch (cp) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			if (cp < 0x20 || cp == 0x7f)
				fprintf(f, "\\x%02x", cp);
			else if (cp == 0xfffe || cp == 0xffff)
				fputs("\xef\xbf\xbd", f);
			else
				fwrite(s, 1, len, f);
		}
		s += len;
	}
}

/* A duration for people: "850 us", "12.3 ms", "1.52 s". */
static void fmt_dur(char *buf, size_t size, uint64_t ns)
{
	if (ns < 1000000)
		snprintf(buf, size, "%.0f \xc2\xb5s", (double)ns / 1e3);
	else if (ns < 10000000000ULL)
		snprintf(buf, size, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.2f s", (double)ns / 1e9);
}

/*
 * Colours: the fixed categories first, then one per other phase name.
 * Class kN of the stylesheet is entry N.
 */
static const struct {
	const char *name;
	const char *colour;
} svg_fixed[] = {
	{ "queued", "#d4d4d4" },
	{ "running", "#a6cee3" },
	{ "modprobe", "#fd8d3c" },
	{ "wait", "#fed976" },
	{ "probe", "#41ab5d" },
	{ "sync-wait", "#e31a1c" },
	{ "links", "#6a51a3" },
};
static const char *const svg_extra[] = {
	"#17becf", "#e377c2", "#8c564b", "#bcbd22", "#1f78b4", "#7f7f7f", "#b15928", "#fb9a99",
};

enum { K_QUEUED, K_RUNNING, K_MODPROBE, K_WAIT, K_PROBE, K_SYNC, K_LINKS, K_FIXED };

#define N_FIXED (sizeof(svg_fixed) / sizeof(svg_fixed[0]))
#define N_EXTRA (sizeof(svg_extra) / sizeof(svg_extra[0]))

/* The colour class of phase name @i. */
static unsigned int phase_class(const struct trace_model *m, uint16_t i)
{
	const char *name = trace_phase_name(m, i);
	unsigned int k, extra = 0;
	size_t j;

	if (strcmp(name, "sync") == 0)
		return K_SYNC;
	for (k = K_MODPROBE; k < K_FIXED; k++)
		if (strcmp(name, svg_fixed[k].name) == 0)
			return k;
	/* the how-manieth unknown name this is */
	for (j = 0; j < i && j < m->n_names; j++) {
		const char *o = m->names[j];
		bool known = strcmp(o, "sync") == 0;

		for (k = K_MODPROBE; k < K_FIXED && !known; k++)
			known = strcmp(o, svg_fixed[k].name) == 0;
		extra += !known;
	}
	return K_FIXED + extra % N_EXTRA;
}

struct svg_geom {
	double x0, w;           /* plot area */
	double scale;           /* px per ns */
	double top;             /* first row */
	double row_h, bar_h;
	bool bands;
	int font;
	uint64_t axis_ns, step_ns;
};

/* Long charts repeat the tick labels in a band every BAND_ROWS rows. */
#define BAND_ROWS 50
#define BAND_H 14.0

static double row_y(const struct svg_geom *g, size_t row)
{
	return g->top + (double)row * g->row_h + (g->bands ? (double)(row / BAND_ROWS) * BAND_H : 0);
}

static double sx(const struct svg_geom *g, uint64_t t)
{
	return g->x0 + (double)t * g->scale;
}

/* A bar segment of at least @minw pixels. */
static void svg_rect(FILE *f, const struct svg_geom *g, double y, uint64_t t0, uint64_t t1,
		     unsigned int cls, double minw)
{
	double x = sx(g, t0), w = (double)(t1 - t0) * g->scale;

	if (w < minw)
		w = minw;
	if (w < 0.05)
		return;         /* nothing to see: a call queued for no time */
	fprintf(f, "<rect class=\"k%u\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>",
		cls, x, y, w, g->bar_h);
}

static void fmt_tick(char *buf, size_t size, uint64_t t, uint64_t step)
{
	if (step >= 1000000)
		snprintf(buf, size, "%" PRIu64 " ms", t / 1000000);
	else if (step >= 100000)
		snprintf(buf, size, "%.1f ms", (double)t / 1e6);
	else if (step >= 10000)
		snprintf(buf, size, "%.2f ms", (double)t / 1e6);
	else
		snprintf(buf, size, "%.3f ms", (double)t / 1e6);
}

static void svg_tick_labels(FILE *f, const struct svg_geom *g, double y)
{
	uint64_t t;
	char buf[32];

	fputs("<g class=\"tick\">", f);
	for (t = 0; t <= g->axis_ns; t += g->step_ns) {
		fmt_tick(buf, sizeof(buf), t, g->step_ns);
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%s</text>", sx(g, t), y, buf);
	}
	fprintf(f, "</g>\n");
}

/* The tooltip and the text beside a call's bar. */
/* put_xml() into a new string, NULL when out of memory. */
static char *xml_string(const char *str, size_t max)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *t = open_memstream(&buf, &size);

	if (!t)
		return NULL;
	put_xml(t, str, max);
	if (fclose(t) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Roughly how many glyphs XML text shows: a character or an entity each. */
static double glyphs(const char *s)
{
	double n = 0;

	for (; *s; s++) {
		if (*s == '&') {
			const char *e = strchr(s, ';');

			if (e)
				s = e;
		} else if (((unsigned char)*s & 0xc0) == 0x80) {
			continue;
		}
		n++;
	}
	return n;
}

static void svg_call_text(FILE *f, const struct trace_model *m, const struct mcall *c,
			  const struct svg_geom *g, double x0, double x1, double y, double width)
{
	char dur[32], buf[32], *text = NULL;
	size_t size = 0;
	double tw;
	FILE *t;
	uint64_t run = c->has_start ? c->end - c->start : c->last - c->first;
	size_t j;

	fmt_dur(dur, sizeof(dur), run);
	fprintf(f, "<title>c%" PRIu64 " ", c->cookie);
	put_xml(f, c->kind, SIZE_MAX);
	fputc(' ', f);
	put_xml(f, c->label, SIZE_MAX);
	if (c->has_start) {
		fprintf(f, "\n%s %u, domain ", c->worker ? "worker" : "main thread", c->worker);
		put_xml(f, c->domain < m->n_domains ? m->domains[c->domain] : "", 64);
		fmt_dur(buf, sizeof(buf), c->start);
		fprintf(f, "\nstarted at %s", buf);
		if (c->has_sched && c->start > c->sched) {
			fmt_dur(buf, sizeof(buf), c->start - c->sched);
			fprintf(f, " after %s queued", buf);
		}
		fprintf(f, ", ran %s%s%s", dur, c->inline_call ? " inline" : "",
			c->has_end ? "" : " (unfinished)");
	} else {
		fprintf(f, "\nfrom its phases: %s", dur);
	}
	if (c->crit_ns) {
		fmt_dur(buf, sizeof(buf), c->crit_ns);
		fprintf(f, "\non the critical path for %s", buf);
	}
	for (j = c->phase_first; j < c->phase_first + c->phase_count; j++) {
		const struct mphase *p = &m->phases[j];

		fmt_dur(buf, sizeof(buf), p->t1 - p->t0);
		fputc('\n', f);
		put_xml(f, trace_phase_name(m, p->name), 64);
		fprintf(f, " %s", buf);
	}
	for (j = c->wait_first; j < c->wait_first + c->wait_count; j++) {
		const struct mwait *w = &m->waits[j];

		fmt_dur(buf, sizeof(buf), w->t1 - w->t0);
		if (w->target == ASYNC_COOKIE_MAX)
			fprintf(f, "\nsync-wait full %s", buf);
		else
			fprintf(f, "\nsync-wait c%" PRIu64 " %s", w->target, buf);
		if (w->released_by) {
			const struct mcall *b = trace_find_call((struct trace_model *)m, w->released_by);

			fprintf(f, ", until c%" PRIu64 " ", w->released_by);
			put_xml(f, b ? b->kind : "", 24);
			fputc(' ', f);
			put_xml(f, b ? b->label : "", 72);
			fputs(" ended", f);
		}
	}
	fputs("</title>", f);

	/*
	 * The label, beside the bar's end; when it would run off the picture
	 * and fits before the bar's start, it goes there instead.
	 */
	fputs("<text ", f);
	t = open_memstream(&text, &size);
	if (!t) {
		fputs("/>", f);
		return;
	}
	fprintf(t, "c%" PRIu64 " ", c->cookie);
	put_xml(t, c->kind, 24);
	fputc(' ', t);
	put_xml(t, c->label, 72);
	fprintf(t, " \xc2\xb7 %s", dur);
	if (c->inline_call)
		fputs(" inline", t);
	else if (c->has_sched && c->has_start && c->start - c->sched >= 50000) {
		fmt_dur(buf, sizeof(buf), c->start - c->sched);
		fprintf(t, " (+%s queued)", buf);
	}
	if (c->has_start && !c->has_end)
		fputs(" unfinished", t);
	if (c->crit_ns && c->crit_ns * 20 >= m->sum.critical_ns) {
		/* a twentieth or more of the critical path */
		fmt_dur(buf, sizeof(buf), c->crit_ns);
		fprintf(t, " \xc2\xb7 critical %s", buf);
	}
	if (fclose(t) != 0 || !text) {
		free(text);
		fputs("/>", f);
		return;
	}
	tw = glyphs(text) * 0.6 * g->font;
	if (x1 + 4 + tw > width && x0 - 4 - tw > 0)
		fprintf(f, "x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">", x0 - 4, y);
	else
		fprintf(f, "x=\"%.2f\" y=\"%.2f\">", x1 + 4, y);
	fputs(text, f);
	fputs("</text>", f);
	free(text);
}

static const double PLOT_W = 1000, LABEL_W = 500, X0 = 30;

/* Scale: a round step giving at most 15 grid lines; row height and font by the rows. */
static void svg_scale(struct svg_geom *g, const struct trace_model *m, size_t rows)
{
	size_t k;

	for (uint64_t p = 1000; !g->step_ns; p *= 10) {
		static const unsigned int mult[] = { 1, 2, 5 };

		for (k = 0; k < 3 && !g->step_ns; k++)
			if (m->end / (mult[k] * p) < 15)
				g->step_ns = mult[k] * p;
	}
	g->axis_ns = (m->end + g->step_ns - 1) / g->step_ns * g->step_ns;
	if (g->axis_ns == 0)
		g->axis_ns = g->step_ns;
	g->scale = PLOT_W / (double)g->axis_ns;
	g->row_h = rows <= 100 ? 18 : rows <= 400 ? 14 : 12;
	g->bar_h = g->row_h - 5;
	g->font = rows <= 100 ? 11 : rows <= 400 ? 10 : 9;
}

#define N_CLASSES (K_FIXED + N_EXTRA)

/* The legend: an entry per colour used, laid out first (it may take several lines). */
struct svg_legend {
	struct {
		char *text;
		double x;
		unsigned int line;
	} e[N_CLASSES];
	unsigned int lines;
	double y;
};

static void legend_free(struct svg_legend *l)
{
	for (size_t k = 0; k < N_CLASSES; k++)
		free(l->e[k].text);
}

static int legend_layout(struct svg_legend *l, const struct trace_model *m)
{
	bool used[N_CLASSES] = { false };
	double lx;
	size_t i, k;

	/* Which colours appear. */
	used[K_QUEUED] = used[K_RUNNING] = true;
	used[K_MODPROBE] = used[K_WAIT] = used[K_PROBE] = used[K_SYNC] = used[K_LINKS] = true;
	for (i = 0; i < m->n_phases; i++)
		used[phase_class(m, m->phases[i].name)] = true;
	l->lines = 1;
	for (k = 0, lx = 16; k < N_CLASSES; k++) {
		const char *name = k < K_FIXED ? svg_fixed[k].name : NULL;
		double w;

		if (!used[k])
			continue;
		if (!name) {
			/* the first other phase name with this colour */
			for (i = 0; i < m->n_names; i++)
				if (phase_class(m, (uint16_t)i) == k)
					break;
			name = i < m->n_names ? m->names[i] : "other";
		}
		l->e[k].text = xml_string(name, 24);
		if (!l->e[k].text)
			return -ENOMEM;
		w = 16 + glyphs(l->e[k].text) * 6.6 + 18;
		if (lx + w > X0 + PLOT_W + LABEL_W - 16 && lx > 16) {
			l->lines++;
			lx = 16;
		}
		l->e[k].x = lx;
		l->e[k].line = l->lines - 1;
		lx += w;
	}
	l->y = m->sum.critical_calls ? 94 : 76;
	return 0;
}

static void svg_style(FILE *f, const struct svg_geom *g, double width, double height)
{
	size_t k;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" "
		"width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n", width, height, width, height);
	fputs("<style>\n"
	      "text { font-family: 'DejaVu Sans', Verdana, Helvetica, Arial, sans-serif; fill: #222; }\n"
	      ".title { font-size: 18px; font-weight: bold; }\n"
	      ".head { font-size: 12px; }\n"
	      ".legend text { font-size: 11px; }\n"
	      ".tick text { font-size: 10px; fill: #555; text-anchor: middle; }\n"
	      ".grid { stroke: #c8c8c8; stroke-width: 1; }\n"
	      ".stripe { fill: #f3f3f3; }\n"
	      ".mark { stroke: #b00; stroke-width: 1; stroke-dasharray: 4 3; }\n"
	      ".marktext { font-size: 10px; fill: #b00; }\n"
	      ".progwait { fill: #e31a1c; opacity: 0.3; }\n", f);
	fprintf(f, ".call text, .prog text { font-size: %dpx; }\n", g->font);
	for (k = 0; k < N_CLASSES; k++)
		fprintf(f, ".k%zu { fill: %s; }\n", k,
			k < K_FIXED ? svg_fixed[k].colour : svg_extra[k - K_FIXED]);
	fputs("</style>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", width, height);
}

/* Title, the figures, marks and facts, the critical path. */
static void svg_header(FILE *f, const struct trace_model *m, const char *title)
{
	char buf[64], dur[32];
	size_t i, j, k;

	fputs("<text class=\"title\" x=\"16\" y=\"26\">", f);
	put_xml(f, title && *title ? title : "asyncprobe", 200);
	fputs("</text>\n", f);
	fmt_dur(dur, sizeof(dur), m->end);
	fprintf(f, "<text class=\"head\" x=\"16\" y=\"46\">total %s \xc2\xb7 %u calls", dur, m->sum.calls);
	if (m->sum.inline_calls)
		fprintf(f, " (%u inline)", m->sum.inline_calls);
	if (m->sum.workers)
		fprintf(f, " \xc2\xb7 %u worker%s", m->sum.workers, m->sum.workers == 1 ? "" : "s");
	else
		fputs(" \xc2\xb7 no workers", f);
	fprintf(f, " \xc2\xb7 peak %u running \xc2\xb7 mode ", m->sum.peak_running);
	put_xml(f, trace_model_mode(m), 40);
	if (m->sum.waits) {
		fmt_dur(buf, sizeof(buf), m->sum.wait_ns);
		fprintf(f, " \xc2\xb7 %" PRIu64 " sync waits (%s summed)", m->sum.waits, buf);
	}
	if (m->sum.dropped)
		fprintf(f, " \xc2\xb7 %" PRIu64 " records lost", m->sum.dropped);
	fputs("</text>\n", f);

	/* Marks and facts on the second line. */
	fputs("<text class=\"head\" x=\"16\" y=\"64\">", f);
	for (i = 0, j = 0; i < m->n_marks && j < 8; i++, j++) {
		fmt_dur(buf, sizeof(buf), m->marks[i].t);
		fputs(j ? " \xc2\xb7 " : "", f);
		put_xml(f, m->marks[i].what, 40);
		fprintf(f, " at %s", buf);
	}
	for (i = 0; i < m->n_metas; i++, j++) {
		if (strcmp(m->metas[i].key, "mode") == 0)
			continue;
		fputs(j ? " \xc2\xb7 " : "", f);
		put_xml(f, m->metas[i].key, 32);
		fputs(": ", f);
		put_xml(f, m->metas[i].value, 64);
	}
	fprintf(f, "%st = 0 at %.3f s monotonic</text>\n", j ? " \xc2\xb7 " : "", (double)m->base / 1e9);

	/* The critical path: the three calls longest on it. */
	if (m->sum.critical_calls) {
		size_t top[3], n = trace_critical_top(m, top, 3);

		fmt_dur(dur, sizeof(dur), m->sum.critical_ns);
		fprintf(f, "<text class=\"head\" x=\"16\" y=\"82\">critical path %s over %u call%s", dur,
			m->sum.critical_calls, m->sum.critical_calls == 1 ? "" : "s");
		for (k = 0; k < n; k++) {
			const struct mcall *c = &m->calls[top[k]];

			fmt_dur(buf, sizeof(buf), c->crit_ns);
			fprintf(f, "%s c%" PRIu64 " ", k ? "," : ":", c->cookie);
			put_xml(f, c->kind, 24);
			fputc(' ', f);
			put_xml(f, c->label, 48);
			fprintf(f, " %s", buf);
		}
		fputs("</text>\n", f);
	}
}

static void svg_legend_draw(FILE *f, const struct svg_legend *l)
{
	fputs("<g class=\"legend\">", f);
	for (size_t k = 0; k < N_CLASSES; k++) {
		if (!l->e[k].text)
			continue;
		fprintf(f, "<rect class=\"k%zu\" x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\"/>",
			k, l->e[k].x, l->y + 16.0 * l->e[k].line);
		fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">%s</text>", l->e[k].x + 16,
			l->y + 10 + 16.0 * l->e[k].line, l->e[k].text);
	}
	fputs("</g>\n", f);
}

/* Stripes, grid, tick labels above and below (and in the bands). */
static void svg_grid(FILE *f, const struct svg_geom *g, size_t rows, double chart_h, double width)
{
	size_t i;

	for (i = 1; i < rows; i += 2)
		fprintf(f, "<rect class=\"stripe\" x=\"0\" y=\"%.2f\" width=\"%.0f\" height=\"%.2f\"/>\n",
			row_y(g, i), width, g->row_h);
	fputs("<g class=\"grid\">", f);
	for (uint64_t t = 0; t <= g->axis_ns; t += g->step_ns)
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>",
			sx(g, t), g->top - 4, sx(g, t), g->top + chart_h);
	fputs("</g>\n", f);
	svg_tick_labels(f, g, g->top - 8);
	svg_tick_labels(f, g, g->top + chart_h + 14);
	for (i = BAND_ROWS; g->bands && i < rows; i += BAND_ROWS)
		svg_tick_labels(f, g, row_y(g, i) - 3);
}

/*
 * Marks: dashed lines behind the bars, labels in two lines above the
 * tick labels, each on the first line where it does not overlap.
 */
static void svg_marks(FILE *f, const struct trace_model *m, const struct svg_geom *g, double chart_h)
{
	double mark_end[2] = { -1e9, -1e9 };
	char buf[64];

	for (size_t i = 0; i < m->n_marks; i++) {
		double x = sx(g, m->marks[i].t), tw = 6.0 * (double)(strlen(m->marks[i].what) + 10);
		unsigned int line = 0;

		if (x < mark_end[0] + 6)
			line = x < mark_end[1] + 6 ? (mark_end[0] < mark_end[1] ? 0 : 1) : 1;
		mark_end[line] = x + tw;
		fmt_dur(buf, sizeof(buf), m->marks[i].t);
		fprintf(f, "<line class=\"mark\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>",
			x, g->top - 38 + (double)line * 13, x, g->top + chart_h);
		fprintf(f, "<text class=\"marktext\" x=\"%.2f\" y=\"%.2f\">", x + 3,
			g->top - 30 + (double)line * 13);
		put_xml(f, m->marks[i].what, 40);
		fprintf(f, " %s</text>\n", buf);
	}
}

/* The program's own row: phases and waits outside any call. */
static void svg_program_row(FILE *f, const struct trace_model *m, const struct svg_geom *g)
{
	double y = g->top, by = y + (g->row_h - g->bar_h) / 2, tx = sx(g, 0);
	uint64_t total = 0;
	char buf[64];
	size_t i;

	fputs("<g class=\"prog\">", f);
	for (i = 0; i < m->program_phases; i++) {
		svg_rect(f, g, by, m->phases[i].t0, m->phases[i].t1,
			 phase_class(m, m->phases[i].name), 1.0);
		if (sx(g, m->phases[i].t1) > tx)
			tx = sx(g, m->phases[i].t1);
	}
	for (i = 0; i < m->program_waits; i++) {
		/* the main thread waiting for everything: drawn light */
		fprintf(f, "<rect class=\"progwait\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>",
			sx(g, m->waits[i].t0), by,
			(double)(m->waits[i].t1 - m->waits[i].t0) * g->scale + 1.0, g->bar_h);
		if (sx(g, m->waits[i].t1) > tx)
			tx = sx(g, m->waits[i].t1);
	}
	for (i = 0; i < m->program_waits; i++)
		total += m->waits[i].t1 - m->waits[i].t0;
	fmt_dur(buf, sizeof(buf), total);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">program, outside calls: %s in sync waits</text></g>\n",
		tx + 4, y + g->row_h - 5, buf);
}

/* One row per call, in cookie order, from row @row on. */
static void svg_call_rows(FILE *f, const struct trace_model *m, const struct svg_geom *g, size_t row,
			  double width)
{
	size_t i, j;

	for (i = 0; i < m->n_calls; i++, row++) {
		const struct mcall *c = &m->calls[i];
		double y, by, x1;
		uint64_t s = c->has_start ? c->start : c->first;
		uint64_t e = c->has_start ? c->end : c->last;

		y = row_y(g, row);
		by = y + (g->row_h - g->bar_h) / 2;
		fprintf(f, "<g class=\"call\" data-cookie=\"%" PRIu64 "\">", c->cookie);
		if (c->has_sched && c->has_start && c->start > c->sched)
			svg_rect(f, g, by, c->sched, c->start, K_QUEUED, 0.0);
		svg_rect(f, g, by, s, e, K_RUNNING, 2.0);
		for (j = c->phase_first; j < c->phase_first + c->phase_count; j++)
			svg_rect(f, g, by, m->phases[j].t0, m->phases[j].t1,
				 phase_class(m, m->phases[j].name), 1.0);
		for (j = c->wait_first; j < c->wait_first + c->wait_count; j++)
			svg_rect(f, g, by, m->waits[j].t0, m->waits[j].t1, K_SYNC, 1.0);
		x1 = sx(g, e);
		if (x1 < sx(g, s) + 2.0)
			x1 = sx(g, s) + 2.0;
		svg_call_text(f, m, c, g, sx(g, c->first), x1, y + g->row_h - 5, width);
		fputs("</g>\n", f);
	}
}

static int write_svg(FILE *f, const struct trace_model *m, const char *title)
{
	struct svg_geom g = { .x0 = X0, .w = PLOT_W };
	bool program_row = m->program_phases > 0 || m->program_waits > 0;
	size_t rows = m->n_calls + program_row;
	struct svg_legend legend = { 0 };
	double chart_h, width, height;
	int r;

	svg_scale(&g, m, rows);
	r = legend_layout(&legend, m);
	if (r < 0)
		goto out;
	g.top = legend.y + 42 + 16.0 * (legend.lines - 1) + (m->n_marks ? 28 : 0);
	g.bands = rows > BAND_ROWS + 10;
	chart_h = rows ? row_y(&g, rows - 1) + g.row_h - g.top : 0;
	width = X0 + PLOT_W + LABEL_W;
	height = g.top + chart_h + 36;

	svg_style(f, &g, width, height);
	svg_header(f, m, title);
	svg_legend_draw(f, &legend);
	svg_grid(f, &g, rows, chart_h, width);
	svg_marks(f, m, &g, chart_h);
	if (program_row)
		svg_program_row(f, m, &g);
	svg_call_rows(f, m, &g, program_row, width);
	fputs("</svg>\n", f);
out:
	legend_free(&legend);
	return r;
}

static int svg_writer(FILE *f, const struct trace_model *m, const void *title)
{
	return write_svg(f, m, title);
}

int ap_trace_write_svg(const char *path, const char *title)
{
	return trace_model_write(path, svg_writer, title);
}
