//! `libheapsampler.so`: the agent under the file name the JVM loads
//! (`java -agentpath:/path/libheapsampler.so=...`). It holds no code of its
//! own: linking `heapsampler_agent` in exports that crate's JVMTI entry
//! points (`Agent_OnLoad`, `Agent_OnAttach`), which a shared library
//! exports from every crate it links. Its one item is the agent's
//! allocator, which only a final artifact may choose.

/// See [`heapsampler_agent::Allocator`].
#[global_allocator]
static ALLOCATOR: heapsampler_agent::Allocator = heapsampler_agent::Allocator;
