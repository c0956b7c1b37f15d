/* The plan pictures and the planner comparison: the caching allocator
 * simulation on a sequence worked out by hand; the SVG, HTML and trace of
 * every bundled model checked for content (one rectangle and title per
 * arena tensor, the live curve and lower bound, the embedded JSON, the
 * trace's counter and lifetimes); --compare's ordering reserved >=
 * allocated >= lower bound; hostile names; a model of a thousand
 * tensors. XML validity and the page in a browser are checked by
 * viz_files.sh and viz_html_chromium.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "passes/planners/caching_allocator.h"
#include "dfg/dfg.h"
#include "program/plan_timeline.h"
#include "program/program.h"
#include "tests/report/report_check.h"

#define KiB ((int64_t)1024)
#define MiB ((int64_t)1024 * 1024)

static size_t count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *at = strstr(text, needle); at;
         at = strstr(at + 1, needle))
        n++;
    return n;
}

static int32_t arena_tensors(const dfg_program *p)
{
    int32_t n = 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        n += p->tensors[i].region == DFG_REGION_ARENA;
    return n;
}

/* ---- the caching allocator on a hand-worked sequence ---- */

static void expect_state(const dfg_caching_allocator *a, int64_t reserved,
                         int64_t allocated, int64_t requested)
{
    assert_int_equal(a->reserved, reserved);
    assert_int_equal(a->allocated, allocated);
    assert_int_equal(a->requested, requested);
}

static void test_caching_hand_worked(void **state)
{
    (void)state;
    dfg_caching_allocator a;
    dfg_caching_init(&a, NULL);
    int32_t A, B, C, D, E, F, G;
    /* A: 1000 B rounds to 1024, small. No cached block: a 2 MiB small
     * segment at address 0, split (remainder 2 MiB - 1 KiB >= 512):
     * A = [0, 1 KiB), free [1 KiB, 2 MiB). */
    assert_int_equal(dfg_caching_malloc(&a, 1000, &A), DFG_OK);
    assert_int_equal(dfg_caching_address(&a, A), 0);
    expect_state(&a, 2 * MiB, 1 * KiB, 1000);
    /* B: 3 MiB, large, < 10 MiB: a 20 MiB segment at 2 MiB, split
     * (remainder 17 MiB > 1 MiB): B = [2, 5) MiB, free [5, 22) MiB. */
    assert_int_equal(dfg_caching_malloc(&a, 3 * MiB, &B), DFG_OK);
    assert_int_equal(dfg_caching_address(&a, B), 2 * MiB);
    expect_state(&a, 22 * MiB, 1 * KiB + 3 * MiB, 1000 + 3 * MiB);
    /* C: 12 MiB fits the cached 17 MiB block (best and only fit): split,
     * C = [5, 17) MiB, free [17, 22) MiB. No new segment. */
    assert_int_equal(dfg_caching_malloc(&a, 12 * MiB, &C), DFG_OK);
    assert_int_equal(dfg_caching_address(&a, C), 5 * MiB);
    expect_state(&a, 22 * MiB, 1 * KiB + 15 * MiB, 1000 + 15 * MiB);
    /* Free B: its neighbours are the segment start and C (allocated), so
     * it stays a 3 MiB free block at 2 MiB. */
    assert_int_equal(dfg_caching_free(&a, B), DFG_OK);
    expect_state(&a, 22 * MiB, 1 * KiB + 12 * MiB, 1000 + 12 * MiB);
    /* D: 4 MiB. Free large blocks: 3 MiB (too small), 5 MiB at 17 MiB.
     * Remainder 1 MiB is not > 1 MiB: no split, D holds all 5 MiB. */
    assert_int_equal(dfg_caching_malloc(&a, 4 * MiB, &D), DFG_OK);
    assert_int_equal(dfg_caching_address(&a, D), 17 * MiB);
    expect_state(&a, 22 * MiB, 1 * KiB + 17 * MiB, 1000 + 16 * MiB);
    /* E: 11 MiB + 1 B rounds to 11 MiB + 512 = 11534848. >= 10 MiB: an
     * exact segment rounded to 2 MiB, 12 MiB, at 22 MiB. Remainder
     * 12582912 - 11534848 = 1048064 < 1 MiB: no split. Reserved 34 MiB;
     * allocated then 1 KiB + 17 MiB + 12 MiB = 29 MiB + 1 KiB. */
    assert_int_equal(dfg_caching_malloc(&a, 11 * MiB + 1, &E), DFG_OK);
    assert_int_equal(dfg_caching_address(&a, E), 22 * MiB);
    expect_state(&a, 34 * MiB, 1 * KiB + 29 * MiB, 1000 + 27 * MiB + 1);
    /* Free C: merges with the free 3 MiB before it: [2, 17) MiB free. */
    assert_int_equal(dfg_caching_free(&a, C), DFG_OK);
    expect_state(&a, 34 * MiB, 1 * KiB + 17 * MiB, 1000 + 15 * MiB + 1);
    /* F: 2 MiB takes the low end of the merged 15 MiB block (remainder
     * 13 MiB > 1 MiB: split): F = [2, 4) MiB. */
    assert_int_equal(dfg_caching_malloc(&a, 2 * MiB, &F), DFG_OK);
    assert_int_equal(dfg_caching_address(&a, F), 2 * MiB);
    /* G: 600 KiB is small: the small pool's free [1 KiB, 2 MiB) block,
     * never the large pool's 13 MiB. G = [1 KiB, 601 KiB). */
    assert_int_equal(dfg_caching_malloc(&a, 600 * KiB, &G), DFG_OK);
    assert_int_equal(dfg_caching_address(&a, G), 1 * KiB);
    expect_state(&a, 34 * MiB, 601 * KiB + 19 * MiB,
                 1000 + 600 * KiB + 17 * MiB + 1);
    /* Peaks: reserved 34 MiB; allocated peaked after E at 29 MiB + 1 KiB
     * (after G it is 19 MiB + 601 KiB); requested after E at
     * 27 MiB + 1001 B. Segments: one small, two large. */
    assert_int_equal(a.stats.reserved_peak_bytes, 34 * MiB);
    assert_int_equal(a.stats.allocated_peak_bytes, 29 * MiB + 1 * KiB);
    assert_int_equal(a.stats.requested_peak_bytes, 27 * MiB + 1001);
    assert_int_equal(a.stats.allocated_at_reserved_peak, 29 * MiB + 1 * KiB);
    assert_int_equal(a.stats.small_segments, 1);
    assert_int_equal(a.stats.large_segments, 2);
    /* Freeing everything caches it all: nothing is returned. */
    int32_t live[] = {A, D, E, F, G};
    for (size_t i = 0; i < sizeof live / sizeof live[0]; i++)
        assert_int_equal(dfg_caching_free(&a, live[i]), DFG_OK);
    expect_state(&a, 34 * MiB, 0, 0);
    /* The 20 MiB segment is whole again: a 20 MiB request reuses it. */
    int32_t H;
    assert_int_equal(dfg_caching_malloc(&a, 20 * MiB, &H), DFG_OK);
    assert_int_equal(dfg_caching_address(&a, H), 2 * MiB);
    assert_int_equal(a.reserved, 34 * MiB);
    dfg_caching_release(&a);
}

static void test_caching_bad_calls(void **state)
{
    (void)state;
    dfg_caching_allocator a;
    dfg_caching_init(&a, NULL);
    int32_t h;
    assert_int_equal(dfg_caching_malloc(&a, 0, &h), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_caching_malloc(&a, -5, &h),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_caching_malloc(&a, INT64_MAX, &h), DFG_ERR_OVERFLOW);
    assert_int_equal(dfg_caching_free(&a, 0), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_caching_malloc(&a, 100, &h), DFG_OK);
    assert_int_equal(dfg_caching_free(&a, h), DFG_OK);
    assert_int_equal(dfg_caching_free(&a, h), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_caching_free(&a, 12345), DFG_ERR_INVALID_ARGUMENT);
    dfg_caching_release(&a);
}

/* ---- the reports of every bundled model ---- */

static void check_svg(const dfg_program *p)
{
    char *svg = report_text(p, dfg_report_svg);
    int32_t n = arena_tensors(p);
    assert_true(strncmp(svg, "<?xml", 5) == 0);
    assert_int_equal(count(svg, "<rect class=\"tensor "), (size_t)n);
    /* One title per tensor, the document's, the live curve's and the
     * two levels'. */
    assert_int_equal(count(svg, "<title>"), (size_t)n + 4);
    /* The level's line, and its sample in the legend. */
    assert_int_equal(count(svg, "<line class=\"lower-bound\""), 2);
    assert_int_equal(count(svg, "<polyline class=\"live-bytes\""), 1);
    assert_non_null(strstr(svg, "KiB</text>"));
    char needle[256];
    for (int32_t i = 0; i < p->n_tensors; i++) {
        if (p->tensors[i].region != DFG_REGION_ARENA)
            continue;
        snprintf(needle, sizeof needle, "data-tensor=\"%d\"", (int)i);
        assert_int_equal(count(svg, needle), 1);
        snprintf(needle, sizeof needle, "<title>%s\n", p->tensors[i].name);
        assert_non_null(strstr(svg, needle));
    }
    assert_int_equal(count(svg, "<svg"), 1);
    assert_non_null(strstr(svg, "</svg>\n"));
    free(svg);
}

/* The live-bytes curve peaks at the plan's lower bound. */
static void check_timeline(const dfg_program *p)
{
    dfg_plan_timeline t;
    assert_int_equal(dfg_plan_timeline_build(p, "test", &t), DFG_OK);
    assert_int_equal(t.peak_bytes, (int64_t)p->stats.lower_bound_bytes);
    assert_int_equal(t.n_arena, arena_tensors(p));
    assert_true(t.extent_bytes >= (int64_t)p->stats.arena_bytes);
    dfg_plan_timeline_free(p, &t);
}

/* The embedded JSON, between its <script> tags, parses and lists every
 * tensor; nothing in it could end the script block. */
static void check_html(const dfg_program *p)
{
    char *html = report_text(p, dfg_report_html);
    assert_true(strncmp(html, "<!DOCTYPE html>", 15) == 0);
    assert_int_equal(count(html, "<rect class=\"tensor "),
                     (size_t)arena_tensors(p));
    /* Self-contained: nothing to fetch. */
    assert_null(strstr(html, " src="));
    assert_null(strstr(html, "href="));
    assert_null(strstr(html, "<link"));
    assert_null(strstr(html, "@import"));
    const char *open = "<script type=\"application/json\" id=\"dfg-plan\">";
    char *start = strstr(html, open);
    assert_non_null(start);
    start += strlen(open);
    char *end = strstr(start, "</script>");
    assert_non_null(end);
    *end = '\0';
    assert_null(strchr(start, '<'));
    json_node *root = json_parse(start);
    assert_non_null(root);
    const json_node *tensors = json_get(root, "tensors");
    assert_non_null(tensors);
    assert_int_equal(tensors->n_children, (size_t)p->n_tensors);
    json_free(root);
    assert_non_null(strstr(end + 1, "data-marks"));
    free(html);
}

/* Counter events peak at the lower bound; one complete event per step
 * and per arena tensor; no two events of a tensor track overlap. */
static void check_trace(const dfg_program *p)
{
    char *text = report_text(p, dfg_report_trace);
    json_node *root = json_parse(text);
    if (!root)
        fail_msg("trace is not JSON:\n%s", text);
    const json_node *events = json_get(root, "traceEvents");
    assert_non_null(events);
    int32_t counters = 0, steps = 0, tensors = 0;
    int64_t peak = 0;
    /* tid, start and end of each tensor event */
    int64_t (*spans)[3] = calloc((size_t)p->n_tensors + 1, sizeof *spans);
    assert_non_null(spans);
    for (size_t i = 0; i < events->n_children; i++) {
        const json_node *e = &events->children[i];
        const char *ph = required_string(e, "ph");
        if (strcmp(ph, "C") == 0) {
            int64_t bytes = required_integer(json_get(e, "args"), "bytes");
            peak = bytes > peak ? bytes : peak;
            counters++;
        } else if (strcmp(ph, "X") == 0) {
            int64_t tid = required_integer(e, "tid");
            int64_t ts = required_integer(e, "ts");
            int64_t dur = required_integer(e, "dur");
            assert_true(dur > 0);
            if (tid == 0) {
                steps++;
                continue;
            }
            assert_true(tid <= p->n_tensors && tensors < p->n_tensors);
            spans[tensors][0] = tid;
            spans[tensors][1] = ts;
            spans[tensors][2] = ts + dur;
            tensors++;
        } else {
            assert_string_equal(ph, "M");
        }
    }
    assert_int_equal(counters, p->n_steps + 1);
    assert_int_equal(steps, p->n_steps);
    assert_int_equal(tensors, arena_tensors(p));
    assert_int_equal(peak, (int64_t)p->stats.lower_bound_bytes);
    for (int32_t i = 0; i < tensors; i++)
        for (int32_t j = i + 1; j < tensors; j++)
            if (spans[i][0] == spans[j][0])
                assert_true(spans[i][2] <= spans[j][1] ||
                            spans[j][2] <= spans[i][1]);
    free(spans);
    json_free(root);
    free(text);
}

/* The comparison table, as a string the caller frees. */
static char *compare_text(const dfg_plan_comparison *c)
{
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(dfg_report_compare(c, out), DFG_OK);
    fclose(out);
    return text;
}

static void check_compare(const dfg_program *p)
{
    dfg_plan_comparison c;
    if (dfg_plan_compare(p, &c) != DFG_OK)
        fail_msg("compare: %s", dfg_last_error());
    assert_int_equal(c.lower_bound_bytes, p->stats.lower_bound_bytes);
    assert_int_equal(c.no_reuse_bytes, p->stats.no_reuse_bytes);
    assert_int_equal(c.compiled_arena_bytes, p->stats.arena_bytes);
    assert_int_equal(c.planner_arena_bytes[p->stats.planner],
                     p->stats.arena_bytes);
    assert_int_equal(c.planner_arena_bytes[DFG_PLANNER_NO_REUSE],
                     c.no_reuse_bytes);
    for (int k = 0; k < DFG_PLANNER_COUNT; k++)
        assert_true(c.planner_arena_bytes[k] >= c.lower_bound_bytes);
    const dfg_caching_stats *s = &c.caching;
    assert_true(s->reserved_peak_bytes >= s->allocated_peak_bytes);
    assert_true(s->allocated_peak_bytes >= s->requested_peak_bytes);
    assert_true(s->allocated_peak_bytes >= c.lower_bound_bytes);
    assert_true(s->allocated_at_reserved_peak <= s->reserved_peak_bytes);
    assert_true(s->small_segments + s->large_segments > 0);
    char *table = compare_text(&c);
    assert_non_null(strstr(table, "caching allocator reserved"));
    assert_non_null(strstr(table, "(this plan)"));
    assert_non_null(strstr(table, "reserved >= allocated >= lower bound: "
                                  "yes\n"));
    free(table);
}

static void test_bundled_models(void **state)
{
    (void)state;
    for (const char *const *name = dfg_model_names(); *name; name++) {
        for (int planner = 0; planner < DFG_PLANNER_COUNT; planner++) {
            dfg_program *p = compile_model(*name, (dfg_planner)planner);
            check_svg(p);
            check_timeline(p);
            check_html(p);
            check_trace(p);
            check_compare(p);
            dfg_program_destroy(p);
        }
    }
}

/* ---- hostile names and large models ---- */

static void test_hostile_names(void **state)
{
    (void)state;
    static const char hostile[] = "</script><!--<b>&\"'\x01\x80";
    dfg_program *p = compile_named_relu(hostile, "]]><svg onload=x>");
    char *svg = report_text(p, dfg_report_svg);
    assert_non_null(strstr(svg, "&lt;/script&gt;&lt;!--&lt;b&gt;&amp;&quot;"
                                "&#39;\xef\xbf\xbd\ngraph input\n"));
    assert_null(strstr(svg, "<svg onload"));
    assert_null(strchr(svg, '\x01'));
    free(svg);
    /* The page holds exactly its own two script blocks and one comment
     * opener-free JSON; the name survives the JSON round trip. */
    char *html = report_text(p, dfg_report_html);
    assert_int_equal(count(html, "</script"), 2);
    assert_null(strstr(html, "<!--"));
    char *json = strstr(html, "id=\"dfg-plan\">") + strlen("id=\"dfg-plan\">");
    *strstr(json, "</script>") = '\0';
    json_node *root = json_parse(json);
    assert_non_null(root);
    assert_string_equal(json_get(root, "inputs")->children[0].text,
                        "</script><!--<b>&\"'\x01\xef\xbf\xbd");
    json_free(root);
    free(html);
    check_trace(p);
    dfg_program_destroy(p);
}

/* A chain of 1000 ops of varying widths: every tensor drawn, no names
 * written inside rectangles, thin outlines, a bounded width. */
static void test_thousand_tensors(void **state)
{
    (void)state;
    dfg_graph *graph;
    dfg_value x, v;
    assert_int_equal(dfg_graph_create(NULL, &graph), DFG_OK);
    assert_int_equal(dfg_graph_input(graph, "x", DFG_F32, 2,
                                     (int64_t[]){16, 64}, &x), DFG_OK);
    v = x;
    for (int i = 0; i < 1000; i++) {
        dfg_value next;
        if (i % 3 == 2)
            assert_int_equal(dfg_add(graph, v, x, &next), DFG_OK);
        else if (i % 3 == 1)
            assert_int_equal(dfg_sigmoid(graph, v, &next), DFG_OK);
        else
            assert_int_equal(dfg_tanh(graph, v, &next), DFG_OK);
        v = next;
    }
    assert_int_equal(dfg_graph_output(graph, v, "y"), DFG_OK);
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.reuse_inputs_in_place = 0;
    dfg_program *p;
    assert_int_equal(dfg_compile(graph, &options, &p), DFG_OK);
    dfg_graph_destroy(graph);
    assert_true(arena_tensors(p) >= 1000);
    check_svg(p);
    char *svg = report_text(p, dfg_report_svg);
    assert_null(strstr(svg, "class=\"label\""));
    assert_non_null(strstr(svg, "stroke-width=\"0.25\""));
    int width = 0;
    assert_int_equal(sscanf(strstr(svg, "width=\"") + 7, "%d", &width), 1);
    assert_in_range(width, 600, 2200);
    free(svg);
    check_trace(p);
    check_compare(p);
    dfg_program_destroy(p);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    report_fn reports[] = {dfg_report_svg, dfg_report_html, dfg_report_trace};
    dfg_program *p = compile_model("mlp", DFG_PLANNER_GREEDY_SIZE);
    FILE *read_only = fopen("/dev/null", "r");
    assert_non_null(read_only);
    for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++) {
        assert_int_equal(reports[i](NULL, stdout), DFG_ERR_INVALID_ARGUMENT);
        assert_int_equal(reports[i](p, NULL), DFG_ERR_INVALID_ARGUMENT);
        assert_int_equal(reports[i](p, read_only), DFG_ERR_IO);
    }
    dfg_plan_comparison c;
    assert_int_equal(dfg_plan_compare(NULL, &c), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_plan_compare(p, NULL), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_plan_compare(p, &c), DFG_OK);
    assert_int_equal(dfg_report_compare(NULL, stdout),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_report_compare(&c, NULL), DFG_ERR_INVALID_ARGUMENT);
    assert_int_equal(dfg_report_compare(&c, read_only), DFG_ERR_IO);
    fclose(read_only);
    dfg_program_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_caching_hand_worked),
        cmocka_unit_test(test_caching_bad_calls),
        cmocka_unit_test(test_bundled_models),
        cmocka_unit_test(test_hostile_names),
        cmocka_unit_test(test_thousand_tensors),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
