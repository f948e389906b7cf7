//! The flash-burst shuffle (Li's thesis): shuffle matrices and their generators (`matrix`), and
//! the protocols as sans-IO state machines (`proto`): packets in, packets and timers out, the
//! clock passed in. The packet simulator (`pktsim`) and a real UDP transport both drive them.

pub mod matrix;
pub mod proto;
