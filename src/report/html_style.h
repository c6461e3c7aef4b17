// The style sheet of the HTML reports, inlined into each page's <style> so the page needs
// nothing from the network. Class names are those the page and the charts write.
#pragma once

#include <string_view>

namespace memledger::report {

std::string_view html_style();

}  // namespace memledger::report
