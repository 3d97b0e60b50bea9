"""Synthetic data straight into PostgreSQL with generate_series (seconds, not minutes).

Benchmarks of reads (agreement, exports) need hundreds of thousands of answers; creating
them through the services would measure the services, not the reads.
"""

SQL = """
INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name, email,
                       is_staff, is_active, date_joined)
SELECT 1000 + u, '!', false, 'synth' || u, '', '', '', false, true, now()
FROM generate_series(0, %(annotators)s - 1) u;

INSERT INTO annotate_fable (id, alias, title, story, source, content_note, is_altered,
                            import_order, created_at)
SELECT f, 'synth_' || f, 'Synthetic ' || f, 'A story number ' || f || ' about a fox.',
       'synth', '', false, f, now()
FROM generate_series(1, %(fables)s) f;

INSERT INTO annotate_revision (id, fable_id, number, reason, proposed, created_at)
SELECT f, f, 1, 'import', false, now() FROM generate_series(1, %(fables)s) f;

INSERT INTO annotate_option (id, revision_id, position, text, kind)
SELECT f * 5 + p, f, p, 'moral ' || p || ' of ' || f,
       (ARRAY['ground_truth', 'similar_characters', 'injected_adjectives',
              'based_on_adjectives', 'partial_story'])[p + 1]
FROM generate_series(1, %(fables)s) f, generate_series(0, 4) p;

UPDATE annotate_fable SET current_revision_id = id;

INSERT INTO annotate_batch (id, name, kind, overlap, flag_double_miss, flag_skip_comment,
                            flag_ambiguous, include_control, one_per_screen, created_at)
VALUES (1, 'synthetic', 'mcqa', 2, true, true, false, false, false, now());

INSERT INTO annotate_batchmember (batch_id, user_id, screening)
SELECT 1, 1000 + u, 'pending' FROM generate_series(0, %(annotators)s - 1) u;

INSERT INTO annotate_batchitem (id, batch_id, fable_id, round, created_at)
SELECT f, 1, f, 1, now() FROM generate_series(1, %(fables)s) f;

-- Two answers per fable, by annotators f mod A and (f + 1 + f / A) mod A (never the same),
-- shown in a rotated order; right about 7 times in 10, sometimes two choices.
CREATE TEMP TABLE synth AS
SELECT f, s, f * 2 + s AS id,
       1000 + CASE WHEN s = 0 THEN f %% %(annotators)s
                   ELSE (f + 1 + (f / %(annotators)s) %% (%(annotators)s - 1)) %% %(annotators)s
              END AS annotator,
       (f * 7 + s * 3) %% 5 AS rot,
       CASE WHEN (f * 13 + s * 29) %% 10 < 7 THEN 0 ELSE 1 + (f + s) %% 4 END AS pick,
       (f * 31 + s) %% 9 = 0 AS multi
FROM generate_series(1, %(fables)s) f, generate_series(0, 1) s;

INSERT INTO annotate_slot (id, batch_id, item_id, fable_id, number, priority, order_key,
                           filled, fresh_only, holder_id, lease_expires_at)
SELECT id, 1, f, f, s + 1, 0, f, true, false, NULL, NULL FROM synth;

INSERT INTO annotate_assignment (id, batch_id, item_id, fable_id, revision_id, annotator_id,
                                 "order", status, claimed_at, expires_at, finished_at,
                                 skip_comment)
SELECT id, 1, f, f, f, annotator,
       jsonb_build_array(f * 5 + (rot) %% 5, f * 5 + (rot + 1) %% 5, f * 5 + (rot + 2) %% 5,
                         f * 5 + (rot + 3) %% 5, f * 5 + (rot + 4) %% 5),
       'submitted', now(), now(), now(), ''
FROM synth;

INSERT INTO annotate_answer (id, assignment_id, slot_id, batch_id, fable_id, revision_id,
                             annotator_id, selected, payload, comment, seconds, created_at)
SELECT id, id, id, 1, f, f, annotator,
       CASE WHEN multi THEN jsonb_build_array(f * 5 + pick, f * 5 + (pick + 1) %% 5)
            ELSE jsonb_build_array(f * 5 + pick) END,
       '{}'::jsonb, '', 12.5, now()
FROM synth;

UPDATE annotate_slot SET holder_id = id;
ANALYZE;
"""


def load(url: str, *, fables: int, annotators: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        # Values are integers formatted here: several statements cannot be sent with parameters.
        conn.execute((SQL % {"fables": int(fables), "annotators": int(annotators)}).encode())
