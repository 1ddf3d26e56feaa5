// The LRU page simulator of lru.c in C++, fed straight from a capture:
// lp_capture_read merges the raw reference trace with its kernel event
// trace as the simulator asks for references, so no basic stream is
// written. Its output equals lru.c's on `laplace merge [--user-only]`.
//
//   c++ -o lru-capture lru.cc $(pkg-config --cflags --libs laplace)
//   ./lru-capture [--user-only] 64 REF KERN
#include <laplace/laplace.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <unordered_map>
#include <vector>

class Lru {
public:
	explicit Lru(size_t frames) : frames_(frames) {}
	// Reference page; true on a miss.
	bool access(uint64_t page)
	{
		auto found = where_.find(page);
		if (found != where_.end()) {
			order_.splice(order_.begin(), order_, found->second);
			return false;
		}
		if (order_.size() == frames_) {
			where_.erase(order_.back());
			order_.pop_back();
		}
		order_.push_front(page);
		where_[page] = order_.begin();
		return true;
	}

private:
	size_t frames_;
	std::list<uint64_t> order_; // most recent first
	std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where_;
};

int main(int argc, char **argv)
{
	lp_capture_options opt;
	lp_capture_options_init(&opt);
	int arg = 1;
	if (arg < argc && !std::strcmp(argv[arg], "--user-only")) {
		opt.user_only = true;
		arg++;
	}
	size_t frames = argc - arg == 3 ? std::strtoul(argv[arg], nullptr, 10) : 0;
	if (frames == 0) {
		std::fprintf(stderr, "usage: %s [--user-only] FRAMES REF KERN\n", argv[0]);
		return 1;
	}
	lp_error err = {};
	lp_capture *capture = lp_capture_open(argv[arg + 1], argv[arg + 2], &opt, &err);
	if (!capture) {
		std::fprintf(stderr, "%s\n", err.msg);
		return err.status;
	}
	Lru lru(frames);
	uint64_t references = 0, misses = 0;
	std::vector<lp_merged_ref> refs(4096);
	ssize_t n;
	while ((n = lp_capture_read(capture, refs.data(), refs.size(), &err)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			misses += lru.access(refs[i].canonical);
		references += n;
	}
	lp_capture_close(capture);
	if (n < 0) {
		std::fprintf(stderr, "%s\n", err.msg);
		return err.status;
	}
	std::printf("%" PRIu64 " references, %" PRIu64 " misses\n", references, misses);
	return 0;
}
