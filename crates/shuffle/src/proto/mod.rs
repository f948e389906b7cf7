//! The shuffle protocols as sans-IO state machines (thesis ch. 3, listings 2-3): GRPF senders
//! and receivers with grants, overcommitment, windows, randomization and unscheduled data; the
//! baselines Hadoop-C, MADD pacing and lockstep.
