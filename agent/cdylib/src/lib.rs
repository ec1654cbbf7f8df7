//! `libheapsampler.so`: the agent under the file name the JVM loads
//! (`java -agentpath:/path/libheapsampler.so=...`). It holds no code of its
//! own: linking `heapsampler_agent` in exports that crate's JVMTI entry
//! points (`Agent_OnLoad`, `Agent_OnAttach`), which a shared library
//! exports from every crate it links.

extern crate heapsampler_agent;
