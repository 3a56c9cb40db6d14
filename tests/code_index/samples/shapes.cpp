#include <cmath>
#include <string>

namespace geometry {

// A circle in the plane, centred anywhere.
class Circle {
 public:
  Circle(double x, double y, double radius) : x_(x), y_(y), radius_(radius) {}
  double area() const;
  std::string describe() const {
    return "circle at (" + std::to_string(x_) + ", " + std::to_string(y_) + ") of radius " +
           std::to_string(radius_);
  }

 private:
  double x_, y_, radius_;
};

double Circle::area() const {
  // The area of the circle, pi r squared, computed in double precision for any radius.
  return M_PI * radius_ * radius_;
}

}  // namespace geometry
