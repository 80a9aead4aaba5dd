/****************************************************************************
** Copyright (c) 2001-2014
**
** This file is part of the QuickFIX FIX Engine
**
** This file may be distributed under the terms of the quickfixengine.org
** license as defined by quickfixengine.org and appearing in the file
** LICENSE included in the packaging of this file.
**
** This file is provided AS IS with NO WARRANTY OF ANY KIND, INCLUDING THE
** WARRANTY OF DESIGN, MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE.
**
** See http://www.quickfixengine.org/LICENSE for licensing information.
**
** Contact ask@quickfixengine.org if any conditions of this licensing are
** not clear to you.
**
****************************************************************************/

/*
 * QuickFIX's ordermatch example (examples/ordermatch/Application.h and .cpp in QuickFIX 1.14/1.15, as
 * Debian's libquickfix-doc ships it), ported from FIX 4.2 to FIX 4.4 as a counterparty for the FIX
 * connector's tests: NewOrderSingle (limit and market; Day, GTC, GTD, IOC, FOK),
 * OrderCancelRequest and OrderCancelReplaceRequest, answered with FIX 4.4 ExecutionReports or
 * OrderCancelRejects; symbols outside the list given on the command line are rejected; a ClOrdID
 * received before is ignored; `repeat` sends an ExecutionReport again with the same ExecID.
 * The example's other files are taken from the package and changed by book.patch.
 */

#ifdef _MSC_VER
#pragma warning( disable : 4503 4355 4786 )
#else
#include "config.h"
#endif

#include "Application.h"
#include "quickfix/Session.h"

#include "quickfix/fix44/ExecutionReport.h"
#include "quickfix/fix44/OrderCancelReject.h"

#include <ctime>
#include <memory>
#include <sstream>

Application::Application( const std::set < std::string > & symbols )
: m_symbols( symbols )
{
  std::stringstream prefix;
  prefix << std::time( 0 ) << "-";
  m_idPrefix = prefix.str();
}

void Application::onLogon( const FIX::SessionID& sessionID ) {}

void Application::onLogout( const FIX::SessionID& sessionID ) {}

void Application::toApp( FIX::Message& message, const FIX::SessionID& )
throw( FIX::DoNotSend )
{
  FIX::MsgType msgType;
  FIX::PossDupFlag possDup( false );
  FIX::ExecID execID;
  message.getHeader().getFieldIfSet( msgType );
  message.getHeader().getFieldIfSet( possDup );
  if ( msgType.getValue() != FIX::MsgType_ExecutionReport || possDup.getValue() ) return;
  if ( !message.getFieldIfSet( execID ) ) return;
  FIX::Locker lock( m_sentMutex );
  std::map < std::string, FIX::Message > ::const_iterator first = m_sent.find( execID.getValue() );
  if ( first == m_sent.end() )
    m_sent.insert( std::make_pair( execID.getValue(), message ) );
  else if ( m_possDupExecID == execID.getValue() )
  {
    // Session::send removes PossDupFlag and OrigSendingTime: a resend is marked here, after it.
    FIX::SendingTime sendingTime;
    first->second.getHeader().getField( sendingTime );
    message.getHeader().setField( FIX::PossDupFlag( true ) );
    message.getHeader().setField( FIX::OrigSendingTime( sendingTime.getValue(), 3 ) );
    m_possDupExecID.clear();
  }
}

void Application::fromApp( const FIX::Message& message,
                           const FIX::SessionID& sessionID )
throw( FIX::FieldNotFound, FIX::IncorrectDataFormat, FIX::IncorrectTagValue, FIX::UnsupportedMessageType )
{
  crack( message, sessionID );
}

// A ClOrdID seen before is a message repeated (a resend after a reconnection): it was handled.
bool Application::repeated( const FIX::ClOrdID& clOrdID )
{
  if ( m_clOrdIDs.insert( clOrdID.getValue() ).second ) return false;
  std::cout << "ignored: ClOrdID " << clOrdID.getValue() << " was received before" << std::endl;
  return true;
}

void Application::onMessage( const FIX44::NewOrderSingle& message, const FIX::SessionID& )
{
  FIX::SenderCompID senderCompID;
  FIX::TargetCompID targetCompID;
  FIX::ClOrdID clOrdID;
  FIX::Symbol symbol;
  FIX::Side side;
  FIX::OrdType ordType;
  FIX::Price price( 0 );
  FIX::OrderQty orderQty;
  FIX::TimeInForce timeInForce( FIX::TimeInForce_DAY );

  message.getHeader().get( senderCompID );
  message.getHeader().get( targetCompID );
  message.get( clOrdID );
  message.get( symbol );
  message.get( side );
  message.get( ordType );
  if ( ordType == FIX::OrdType_LIMIT )
    message.get( price );
  message.get( orderQty );
  message.getFieldIfSet( timeInForce );

  if ( repeated( clOrdID ) ) return;
  if ( !m_symbols.empty() && !m_symbols.count( symbol.getValue() ) )
  {
    rejectOrder( senderCompID, targetCompID, clOrdID, symbol, side,
                 FIX::OrdRejReason_UNKNOWN_SYMBOL, "Unknown symbol " + symbol.getValue() );
    return;
  }

  try
  {
    switch ( timeInForce )
    {
      case FIX::TimeInForce_DAY:
      case FIX::TimeInForce_GOOD_TILL_CANCEL:
      case FIX::TimeInForce_GOOD_TILL_DATE:
      case FIX::TimeInForce_IMMEDIATE_OR_CANCEL:
      case FIX::TimeInForce_FILL_OR_KILL:
        break;
      default: throw std::logic_error( "Unsupported TIF, use Day, GTC, GTD, IOC or FOK" );
    }
    if ( orderQty <= 0 )
      throw std::logic_error( "OrderQty must be positive" );

    Order order( clOrdID, symbol, senderCompID, targetCompID,
                 convert( side ), convert( ordType ),
                 price, (long)orderQty );
    order.setOrderID( m_idPrefix + m_generator.genOrderID() );

    processOrder( order, timeInForce );
  }
  catch ( std::exception & e )
  {
    rejectOrder( senderCompID, targetCompID, clOrdID, symbol, side, FIX::OrdRejReason_OTHER, e.what() );
  }
}

void Application::onMessage( const FIX44::OrderCancelRequest& message, const FIX::SessionID& )
{
  FIX::SenderCompID senderCompID;
  FIX::TargetCompID targetCompID;
  FIX::OrigClOrdID origClOrdID;
  FIX::ClOrdID clOrdID;
  FIX::Symbol symbol;
  FIX::Side side;

  message.getHeader().get( senderCompID );
  message.getHeader().get( targetCompID );
  message.get( origClOrdID );
  message.get( clOrdID );
  message.get( symbol );
  message.get( side );

  if ( repeated( clOrdID ) ) return;
  try
  {
    Order& order = m_orderMatcher.find( symbol, convert( side ), origClOrdID );
    order.cancel();
    updateOrder( order, FIX::ExecType_CANCELED, FIX::OrdStatus_CANCELED, clOrdID, origClOrdID );
    finish( order, FIX::OrdStatus_CANCELED );
    m_orderMatcher.erase( order );
  }
  catch ( std::exception& )
  {
    rejectRequest( senderCompID, targetCompID, clOrdID, origClOrdID,
                   FIX::CxlRejResponseTo_ORDER_CANCEL_REQUEST, 0, "" );
  }
}

// Amends the quantity (the whole order's) and the limit of a resting limit order. The order
// leaves the book and enters it again, behind the orders at its new limit.
void Application::onMessage( const FIX44::OrderCancelReplaceRequest& message, const FIX::SessionID& )
{
  FIX::SenderCompID senderCompID;
  FIX::TargetCompID targetCompID;
  FIX::OrigClOrdID origClOrdID;
  FIX::ClOrdID clOrdID;
  FIX::Symbol symbol;
  FIX::Side side;
  FIX::OrdType ordType;
  FIX::Price price;
  FIX::OrderQty orderQty;

  message.getHeader().get( senderCompID );
  message.getHeader().get( targetCompID );
  message.get( origClOrdID );
  message.get( clOrdID );
  message.get( symbol );
  message.get( side );
  message.get( ordType );
  message.get( orderQty );
  bool priced = message.getFieldIfSet( price );

  if ( repeated( clOrdID ) ) return;
  Order* found = 0;
  try
  {
    found = &m_orderMatcher.find( symbol, convert( side ), origClOrdID );
  }
  catch ( std::exception& ) {}

  const char responseTo = FIX::CxlRejResponseTo_ORDER_CANCEL_REPLACE_REQUEST;
  if ( found == 0 )
    rejectRequest( senderCompID, targetCompID, clOrdID, origClOrdID, responseTo, 0, "" );
  else if ( ordType != FIX::OrdType_LIMIT || found->getType() != Order::limit || !priced )
    rejectRequest( senderCompID, targetCompID, clOrdID, origClOrdID, responseTo, found,
                   "Only the quantity and limit of a limit order can be replaced" );
  else if ( (long)orderQty <= found->getExecutedQuantity() )
    rejectRequest( senderCompID, targetCompID, clOrdID, origClOrdID, responseTo, found,
                   "OrderQty must exceed the quantity executed" );
  else
  {
    Order replaced( *found );
    m_orderMatcher.erase( *found );
    replaced.replace( clOrdID, (long)orderQty, price );
    m_orderMatcher.insert( replaced );
    updateOrder( replaced, FIX::ExecType_REPLACED,
                 replaced.getExecutedQuantity() ? FIX::OrdStatus_PARTIALLY_FILLED : FIX::OrdStatus_NEW,
                 clOrdID, origClOrdID );
    match( symbol );
  }
}

void Application::updateOrder( const Order& order, char execType, char ordStatus,
                               const std::string& clOrdID, const std::string& origClOrdID )
{
  FIX::TargetCompID targetCompID( order.getOwner() );
  FIX::SenderCompID senderCompID( order.getTarget() );

  FIX44::ExecutionReport fixOrder
  ( FIX::OrderID ( order.getOrderID() ),
    FIX::ExecID ( m_idPrefix + m_generator.genExecutionID() ),
    FIX::ExecType ( execType ),
    FIX::OrdStatus ( ordStatus ),
    FIX::Side ( convert( order.getSide() ) ),
    FIX::LeavesQty ( order.getOpenQuantity() ),
    FIX::CumQty ( order.getExecutedQuantity() ),
    FIX::AvgPx ( order.getAvgExecutedPrice() ) );

  fixOrder.set( FIX::ClOrdID( clOrdID.empty() ? order.getClientID() : clOrdID ) );
  if ( !origClOrdID.empty() )
    fixOrder.set( FIX::OrigClOrdID( origClOrdID ) );
  fixOrder.set( FIX::Symbol( order.getSymbol() ) );
  fixOrder.set( FIX::OrderQty( order.getQuantity() ) );
  fixOrder.set( convert( order.getType() ) );
  if ( order.getType() == Order::limit )
    fixOrder.set( FIX::Price( order.getPrice() ) );
  fixOrder.set( FIX::TransactTime( 3 ) );

  if ( execType == FIX::ExecType_TRADE )
  {
    fixOrder.set( FIX::LastQty( order.getLastExecutedQuantity() ) );
    fixOrder.set( FIX::LastPx( order.getLastExecutedPrice() ) );
  }

  try
  {
    FIX::Session::sendToTarget( fixOrder, senderCompID, targetCompID );
  }
  catch ( FIX::SessionNotFound& ) {}}

void Application::fillOrder( const Order& order )
{
  char status = order.isFilled() ? FIX::OrdStatus_FILLED : FIX::OrdStatus_PARTIALLY_FILLED;
  updateOrder( order, FIX::ExecType_TRADE, status );
  if ( order.isFilled() ) finish( order, status );
}

void Application::finish( const Order& order, char ordStatus )
{
  m_finished[ order.getClientID() ] = std::make_pair( order.getOrderID(), ordStatus );
}

void Application::rejectOrder
( const FIX::SenderCompID& sender, const FIX::TargetCompID& target,
  const FIX::ClOrdID& clOrdID, const FIX::Symbol& symbol,
  const FIX::Side& side, int ordRejReason, const std::string& message )
{
  FIX::TargetCompID targetCompID( sender.getValue() );
  FIX::SenderCompID senderCompID( target.getValue() );
  std::string orderID = m_idPrefix + m_generator.genOrderID();

  FIX44::ExecutionReport fixOrder
  ( FIX::OrderID ( orderID ),
    FIX::ExecID ( m_idPrefix + m_generator.genExecutionID() ),
    FIX::ExecType ( FIX::ExecType_REJECTED ),
    FIX::OrdStatus ( FIX::OrdStatus_REJECTED ),
    side, FIX::LeavesQty( 0 ), FIX::CumQty( 0 ), FIX::AvgPx( 0 ) );

  fixOrder.set( clOrdID );
  fixOrder.set( symbol );
  fixOrder.set( FIX::OrdRejReason( ordRejReason ) );
  fixOrder.set( FIX::Text( message ) );
  fixOrder.set( FIX::TransactTime( 3 ) );
  m_finished[ clOrdID.getValue() ] = std::make_pair( orderID, FIX::OrdStatus_REJECTED );

  try
  {
    FIX::Session::sendToTarget( fixOrder, senderCompID, targetCompID );
  }
  catch ( FIX::SessionNotFound& ) {}}

// OrderCancelReject of a cancel or a replace: of an order still in the book (order, with why),
// of an order no longer there (too late), or of an order never received (unknown).
void Application::rejectRequest
( const FIX::SenderCompID& sender, const FIX::TargetCompID& target,
  const FIX::ClOrdID& clOrdID, const FIX::OrigClOrdID& origClOrdID,
  char responseTo, const Order* order, const std::string& message )
{
  FIX::TargetCompID targetCompID( sender.getValue() );
  FIX::SenderCompID senderCompID( target.getValue() );
  std::string orderID = "NONE";
  char ordStatus = FIX::OrdStatus_REJECTED;
  int reason = FIX::CxlRejReason_UNKNOWN_ORDER;
  std::string text = "Unknown order";
  std::map < std::string, std::pair < std::string, char > > ::const_iterator finished =
    m_finished.find( origClOrdID.getValue() );

  if ( order != 0 )
  {
    orderID = order->getOrderID();
    ordStatus = order->getExecutedQuantity() ? FIX::OrdStatus_PARTIALLY_FILLED : FIX::OrdStatus_NEW;
    reason = FIX::CxlRejReason_BROKER_OPTION;
    text = message;
  }
  else if ( finished != m_finished.end() )
  {
    orderID = finished->second.first;
    ordStatus = finished->second.second;
    reason = FIX::CxlRejReason_TOO_LATE_TO_CANCEL;
    text = ordStatus == FIX::OrdStatus_FILLED ? "Order is filled"
         : ordStatus == FIX::OrdStatus_CANCELED ? "Order is cancelled" : "Order was rejected";
  }

  FIX44::OrderCancelReject reject
  ( FIX::OrderID( orderID ), clOrdID, origClOrdID,
    FIX::OrdStatus( ordStatus ), FIX::CxlRejResponseTo( responseTo ) );
  reject.set( FIX::CxlRejReason( reason ) );
  reject.set( FIX::Text( text ) );

  try
  {
    FIX::Session::sendToTarget( reject, senderCompID, targetCompID );
  }
  catch ( FIX::SessionNotFound& ) {}}

bool Application::repeat( const std::string& execID, bool possDup )
{
  std::unique_ptr < FIX::Message > copy;
  {
    FIX::Locker lock( m_sentMutex );
    std::map < std::string, FIX::Message > ::const_iterator i = m_sent.find( execID );
    if ( i == m_sent.end() ) return false;
    copy.reset( new FIX::Message( i->second ) );
    m_possDupExecID = possDup ? execID : "";
  }
  FIX::SenderCompID senderCompID;
  FIX::TargetCompID targetCompID;
  copy->getHeader().getField( senderCompID );
  copy->getHeader().getField( targetCompID );
  try
  {
    return FIX::Session::sendToTarget( *copy, senderCompID, targetCompID );
  }
  catch ( FIX::SessionNotFound& )
  {
    return false;
  }
}

void Application::processOrder( const Order& order, char timeInForce )
{
  // Market, IOC and FOK orders never rest: what does not execute at once is cancelled (FOK: the
  // whole order, unless it can execute in full).
  bool immediate = order.getType() == Order::market ||
                   timeInForce == FIX::TimeInForce_IMMEDIATE_OR_CANCEL ||
                   timeInForce == FIX::TimeInForce_FILL_OR_KILL;
  if ( timeInForce == FIX::TimeInForce_FILL_OR_KILL &&
       m_orderMatcher.available( order ) < order.getQuantity() )
  {
    acceptOrder( order );
    cancelRest( order );
    return;
  }

  m_orderMatcher.insert( order );
  acceptOrder( order );
  match( order.getSymbol() );

  if ( immediate )
  {
    try
    {
      Order& rest = m_orderMatcher.find( order.getSymbol(), order.getSide(), order.getClientID() );
      cancelRest( rest );
      m_orderMatcher.erase( rest );
    }
    catch ( std::exception& ) {} // executed in full
  }
}

void Application::cancelRest( const Order& order )
{
  Order rest( order );
  rest.cancel();
  updateOrder( rest, FIX::ExecType_CANCELED, FIX::OrdStatus_CANCELED );
  finish( rest, FIX::OrdStatus_CANCELED );
}

void Application::match( const std::string& symbol )
{
  std::queue < Order > orders;
  m_orderMatcher.match( symbol, orders );

  while ( orders.size() )
  {
    fillOrder( orders.front() );
    orders.pop();
  }
}

Order::Side Application::convert( const FIX::Side& side )
{
  switch ( side )
  {
    case FIX::Side_BUY: return Order::buy;
    case FIX::Side_SELL: return Order::sell;
    default: throw std::logic_error( "Unsupported Side, use buy or sell" );
  }
}

Order::Type Application::convert( const FIX::OrdType& ordType )
{
  switch ( ordType )
  {
    case FIX::OrdType_LIMIT: return Order::limit;
    case FIX::OrdType_MARKET: return Order::market;
    default: throw std::logic_error( "Unsupported Order Type, use limit or market" );
  }
}

FIX::Side Application::convert( Order::Side side )
{
  switch ( side )
  {
    case Order::buy: return FIX::Side( FIX::Side_BUY );
    case Order::sell: return FIX::Side( FIX::Side_SELL );
    default: throw std::logic_error( "Unsupported Side, use buy or sell" );
  }
}

FIX::OrdType Application::convert( Order::Type type )
{
  switch ( type )
  {
    case Order::limit: return FIX::OrdType( FIX::OrdType_LIMIT );
    case Order::market: return FIX::OrdType( FIX::OrdType_MARKET );
    default: throw std::logic_error( "Unsupported Order Type, use limit or market" );
  }
}
