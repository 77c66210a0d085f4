#lang racket/base
(define a (read))
(define b (read))
(printf "~a\n" (+ a b))
