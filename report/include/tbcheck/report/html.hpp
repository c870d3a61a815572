// One self-contained HTML page for a validation run (`tbcheck validate --report`): the case x hypothesis
// table and, per failing case, predicted against observed in one difference picture (inline SVG).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/validate.hpp"

namespace tbcheck::report {

// The recorded schedule of a case as a Schedule (hypothesis "observed"): SMs from sm_of_block (-1 where
// not recorded), starts from start_of_block (0 where not recorded), ends = start + kernel duration.
model::Schedule observed_schedule(const model::Case& c);

struct HtmlOptions {
  std::string title = "tbcheck validation report";
  // Collections (consecutive cases of one file) larger than this read as one row of pass counts,
  // and only their first failure per hypothesis gets timelines.
  size_t collection_row_limit = 50;
  size_t max_failure_sections = 60;  // beyond it the page lists failures without pictures
  // Extra sections at the end, as (heading, preformatted text): validate's contested predictions,
  // rendered by search/ and escaped here.
  std::vector<std::pair<std::string, std::string>> text_sections;
};

// No external scripts, fonts or style sheets: the page opens offline and can be mailed as one file.
// Failure sections show, for a recording, the difference picture of predicted and observed (the blocks
// that differ marked, the first in red); for a case of paper facts, the predicted timeline and the facts that fail.
std::string render_validation_html(const model::ValidationRun& run, const std::vector<model::Level>& levels,
                                   const HtmlOptions& o = {});

}  // namespace tbcheck::report
