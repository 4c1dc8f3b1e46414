#!/usr/bin/env python3
"""Mutation check of a move's decisions: watermarks, chunk bounds,
checksum, repair and cutover. Each mutant is applied to the source in place
(the file is restored afterwards, even on failure), the named targets are
rebuilt in build/, and the tests that should notice it are run. A mutant whose
text no longer matches the source reports NOT APPLIED: update it with the code.

  scripts/mutants_move.py            # every mutant (about 15 minutes on 2 cores)
  scripts/mutants_move.py W3 X2      # some, by id

Not part of the test suite: it rewrites source files while it runs.
"""
import os, shutil, subprocess, sys, tempfile, time

os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
backup = os.path.join(tempfile.mkdtemp(prefix="binrelay-mutants-"), "original")

# Each mutant: (id, file, old, new, build targets, gtest binary, filter)
U = ("apply_tests", "build/tests/apply_tests", "CopyWatermarks*:DeferredRows*")
I_COPY = ("integration_tests binrelay", "build/tests/integration_tests",
          "RangeCopier*:TableMoveTest.MoveUnderRandomWrites*:TableMoveTest.ChecksumFinds*")
I_CUT = ("integration_tests binrelay", "build/tests/integration_tests",
         "TableMoveTest.MoveUnderRandomWrites*:TableMoveTest.MillionRows*")
I_SUM = ("integration_tests binrelay", "build/tests/integration_tests",
         "RangeCopier*:TableMoveTest.ChecksumFinds*:TableMoveTest.DifferenceThatPersists*")
M = [
 ("W1 drop before the first dispatch", "apply/copy_watermarks.cc",
  "if (exact_order_ && dispatched_any_ && above_guard) {", "if (exact_order_ && above_guard) {", *U),
 ("W2 guard never raised", "apply/copy_watermarks.cc",
  "if (above_guard) guard_ = std::string(key);", "", *U),
 ("W3 key equal to the guard dropped", "apply/copy_watermarks.cc",
  "const bool above_guard = !guard_ || Above(key, *guard_);",
  "const bool above_guard = !guard_ || !Above(*guard_, std::string(key));", *U),
 ("W4 in-flight chunk's upper bound not deferred", "apply/copy_watermarks.cc",
  "(!c.upper || !Above(key, *c.upper))", "(!c.upper || Above(*c.upper, std::string(key)))", *U),
 ("W5 in-flight chunk's lower bound deferred too", "apply/copy_watermarks.cc",
  "(!c.lower || Above(key, *c.lower))", "(!c.lower || !Above(*c.lower, std::string(key)))", *U),
 ("W6 low watermark passes an unfinished chunk", "apply/copy_watermarks.cc",
  "while (!in_flight_.empty() && in_flight_.begin()->second.complete) {",
  "while (!in_flight_.empty()) {", *U),
 ("W7 checkpoint guard ignores the high watermark", "apply/copy_watermarks.cc",
  "  if (!high_) return guard_;\n  if (!guard_) return high_;", "  return guard_;\n  if (!guard_) return high_;", *U),
 ("W8 the high watermark key itself counted as not dispatched", "apply/copy_watermarks.cc",
  "return !high_ || Above(key, *high_);", "return !high_ || !Above(*high_, std::string(key));", *U),
 ("W9 resume ignores the target's highest key", "apply/copy_watermarks.cc",
  "if (target_highest && (!guard_ || Above(*target_highest, *guard_))) {", "if (false) {", *U),
 ("C1 chunk upper bound exclusive (a gap)", "apply/key_range_chunker.cc",
  'out.append(after ? " > " : (last ? " <= " : " < "));', 'out.append(after ? " > " : (last ? " < " : " < "));', *I_COPY),
 ("C2 chunk lower bound inclusive (an overlap)", "apply/key_range_chunker.cc",
  'out.append(after ? " > " : (last ? " <= " : " < "));', 'out.append(after ? (last ? " >= " : " > ") : (last ? " <= " : " < "));', *I_COPY),
 ("S1 checksum without NULL flags", "apply/range_checksum.cc",
  'nulls.empty() ? "" : absl::StrCat(",CONCAT(", nulls, ")")', '""', *I_SUM),
 ("S2 checksum hash as CRC32 (affine)", "apply/range_checksum.cc",
  ('"SELECT COUNT(*), COALESCE(BIT_XOR(CAST(CONV(LEFT(SHA2(CONCAT_WS(\'|\'",', '"),256),16),16,10) AS UNSIGNED)),0) FROM "'),
  ('"SELECT COUNT(*), COALESCE(BIT_XOR(CAST(CONV(LEFT(LPAD(HEX(CRC32(CONCAT_WS(\'|\'",', '")),16,\'0\'),16),16,10) AS UNSIGNED)),0) FROM "'), *I_SUM),
 ("S3 a differing range not repaired", "apply/table_move.cc",
  "      for (size_t i : differing) {", "      for (size_t i : std::vector<size_t>{}) {", *I_SUM),
 ("S4 repair copies without deleting first", "apply/table_move.cc",
  'target.Execute(absl::StrCat("DELETE FROM ", t.TargetSql(), " WHERE ", range.where)), what));',
  'absl::OkStatus(), what));', *I_SUM),
 ("X1 cutover renames without applying up to the lock's position", "apply/table_move.cc",
  "absl::Status applied = pipeline_->AdvanceTo(\n      *at,", "absl::Status applied = absl::OkStatus(); (void)pipeline_->Status(); (void)(\n      *at,", *I_CUT),
 ("X2 watermarks left on through the cutover", "apply/table_move.cc",
  "  for (auto& t : tables_) t->gate->Disable();\n  // Also after a restart", "  // Also after a restart", *I_CUT),
]


only = sys.argv[1:]
res = []
for (mid, f, old, new, targets, binary, flt) in M:
    if only and mid.split()[0] not in only: continue
    src = open(f).read()
    pairs = list(zip(old, new)) if isinstance(old, tuple) else [(old, new)]
    bad = [o for o, _ in pairs if src.count(o) != 1]
    if bad:
        res.append((mid, 'NOT APPLIED')); print(res[-1], flush=True); continue
    mutated = src
    for o, n in pairs: mutated = mutated.replace(o, n)
    shutil.copy(f, backup)
    try:
        open(f, 'w').write(mutated)
        b = subprocess.run('cmake --build build -j2 --target ' + targets, shell=True, capture_output=True, text=True)
        if b.returncode != 0:
            res.append((mid, 'BUILD FAILED: ' + b.stdout[-300:])); print(res[-1], flush=True); continue
        t0 = time.time()
        r = subprocess.run([binary, '--gtest_filter=' + flt], capture_output=True, text=True, timeout=900)
        failed = [l for l in r.stdout.splitlines() if l.startswith('[  FAILED  ]') and '.' in l]
        res.append((mid, ('KILLED by ' + '; '.join(sorted(set(x[13:].split(' (')[0] for x in failed)))) if r.returncode != 0 else 'SURVIVED', round(time.time()-t0)))
        print(res[-1], flush=True)
    finally:
        shutil.copy(backup, f)
subprocess.run('cmake --build build -j2', shell=True, capture_output=True)
print('\n'.join(str(x) for x in res))
