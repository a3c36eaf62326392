;; Recurses 800,000 frames deep, checked on the way down, and on the way
;; back up does about 12 us of work in each frame after its call returns,
;; each frame's work under one segment: the time limit must stop it, and
;; would not if a frame's unchecked tail were left out of the count.
(module
  (memory (export "memory") 1)
  (func $sqrts (param $x f64) (result f64)
    (local.get $x)
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
    f64.sqrt
  )
  (func $f (param $n i32) (param $x f64) (result f64)
    (if (i32.eqz (local.get $n)) (then (return (local.get $x))))
    (local.set $x (call $f (i32.sub (local.get $n) (i32.const 1)) (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.set $x (call $sqrts (local.get $x)))
    (local.get $x))
  (func (export "_start") (drop (call $f (i32.const 800000) (f64.const 2)))))
